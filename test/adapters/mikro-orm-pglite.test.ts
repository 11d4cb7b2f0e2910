import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { storageContract } from '../contracts/storage.contract.ts';

// MikroORM over the PGlite socket, in memory: the same stack `CONSOLE_STORAGE=embedded` runs.
storageContract('mikro-orm on embedded PGlite', async () => {
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
  const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
  return { ...storage, close: async () => { await storage.close(); await server.close(); } };
});
