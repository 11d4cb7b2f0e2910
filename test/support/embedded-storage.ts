import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import type { Storage } from '../../ports/storage.ts';
import type { OpenedStorage } from './storage-kinds.ts';

// MikroORM over the PGlite socket, in memory: the same stack `CONSOLE_STORAGE=embedded` runs. Each contract
// suite on it is a file of its own (test/adapters/mikro-orm-pglite-*.test.ts), so the runner runs them at once.
// (No bus suite: LISTEN/NOTIFY does not cross the socket's connections; embedded mode uses the in-process bus.)

/** A storage on a fresh embedded database, closed with it. */
export async function embeddedStorage(): Promise<Storage> {
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
  const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
  return { ...storage, close: async () => { await storage.close(); await server.close(); } };
}

/** A fresh embedded database, and storages over it as a second instance opens them. */
export async function openEmbedded(): Promise<OpenedStorage> {
  // Room for the pools of a few storages over it (its default cap is one storage's pool and two more).
  const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 4 * EMBEDDED_POOL_SIZE + 2 });
  const opened: Storage[] = [];
  const connect = async () => {
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    opened.push(storage);
    return storage;
  };
  return { storage: await connect(), reopen: connect, close: async () => { for (const s of opened) await s.close(); await server.close(); } };
}
