import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import type { Storage } from '../../ports/storage.ts';
import { consoleWriterContract } from '../contracts/console-writer.contract.ts';
import { directiveQueueContract } from '../contracts/directive-queue.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';

// MikroORM over the PGlite socket, in memory: the same stack `CONSOLE_STORAGE=embedded` runs.
// (No bus suite here: LISTEN/NOTIFY does not cross the socket's connections; embedded mode uses the in-process bus.)
async function embeddedStorage(): Promise<Storage> {
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
  const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
  return { ...storage, close: async () => { await storage.close(); await server.close(); } };
}

storageContract('mikro-orm on embedded PGlite', embeddedStorage);
consoleWriterContract('mikro-orm on embedded PGlite', embeddedStorage);
eventLogContract('mikro-orm on embedded PGlite', embeddedStorage);
directiveQueueContract('mikro-orm on embedded PGlite', async () => {
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
  const opened: Storage[] = [];
  const connect = async () => {
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    opened.push(storage);
    return storage;
  };
  return { storage: await connect(), reopen: connect, close: async () => { for (const s of opened) await s.close(); await server.close(); } };
});
