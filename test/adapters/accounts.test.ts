// The Accounts contract on every storage: memory, MikroORM on embedded PGlite, and (with
// TEST_DATABASE_URL) MikroORM on PostgreSQL, each with a second storage over the same data; and on embedded PGlite
// as `npm start` opens it, its credentials kept (adapters/mikro-orm/kept-credentials.ts), where the database is one
// process's alone: its "second storage" is the same one.
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { accountsContract } from '../contracts/accounts.contract.ts';
import { allStorageKinds } from '../support/storage-kinds.ts';

for (const kind of allStorageKinds('accounts')) accountsContract(kind.name, () => kind.open());

accountsContract('embedded PGlite, credentials kept', async () => {
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
  const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE }, { catalog: true, credentials: true });
  return { storage, reopen: async () => storage, close: async () => { await storage.close(); await server.close(); } };
});
