import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import type { Storage } from '../../ports/storage.ts';
import { createScratchDatabase } from './scratch-database.ts';

/** One backend opened for a test: its storage, another storage over the same data (a second instance, or a restart), and its end. */
export interface OpenedStorage {
  readonly storage: Storage;
  /** A new storage over the same data, as a restarted process or another instance opens it. */
  readonly reopen: () => Promise<Storage>;
  /** Closes every storage opened and drops what the backend holds. */
  readonly close: () => Promise<void>;
}

export interface StorageKind {
  readonly name: string;
  readonly open: (onQuery?: (sql: string) => void) => Promise<OpenedStorage>;
}

/**
 * The storage matrix the HTTP tests run on: every backend ({@link allStorageKinds}), or only those
 * `TEST_STORAGE_KINDS` names (comma-separated: `memory`, `PGlite`, `PostgreSQL`). `npm test` sets it to
 * `memory`; `npm run test:full` runs the matrix on every backend (test/run.mjs).
 */
export function storageKinds(prefix: string): StorageKind[] {
  const only = process.env.TEST_STORAGE_KINDS?.split(',').map((name) => name.trim().toLowerCase()).filter((name) => name !== '');
  const kinds = allStorageKinds(prefix);
  return only === undefined || only.length === 0 ? kinds : kinds.filter((kind) => only.some((name) => kind.name.toLowerCase().includes(name)));
}

/** Whether the tier runs the storage matrix on the databases too (false in `npm test`: memory only). */
export const databasesInTier = (): boolean => storageKinds('probe').some((kind) => kind.name !== 'memory');

/** Why a test on a database is skipped here, for its `skip` option; false where it runs. */
export const databaseSkip = (): string | false => (databasesInTier() ? false : 'the storage matrix on databases runs in npm run test:full');

/**
 * Every backend: memory, embedded PGlite, and PostgreSQL when `TEST_DATABASE_URL` is set (a scratch
 * database named with `prefix`, dropped at the end). The ports' contract suites run on all of them in every tier.
 */
export function allStorageKinds(prefix: string): StorageKind[] {
  const kinds: StorageKind[] = [
    {
      name: 'memory',
      open: async () => {
        const state = emptyState();
        return { storage: createMemoryStorage(state), reopen: async () => createMemoryStorage(state), close: async () => {} };
      },
    },
    {
      name: 'embedded PGlite',
      open: async (onQuery) => {
        // Each storage opened over it (`reopen`: a second instance, a restart) holds a pool of its own: room for a
        // few, where `npm start`'s one storage needs the default (a connection past the cap is closed at once).
        const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 4 * EMBEDDED_POOL_SIZE + 2 });
        const opened: Storage[] = [];
        const connect = async () => {
          const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE, ...(onQuery === undefined ? {} : { onQuery }) });
          opened.push(storage);
          return storage;
        };
        return { storage: await connect(), reopen: connect, close: async () => { for (const s of opened) await s.close(); await server.close(); } };
      },
    },
  ];
  const postgres = process.env.TEST_DATABASE_URL;
  if (postgres) {
    kinds.push({
      name: 'PostgreSQL',
      open: async (onQuery) => {
        const scratch = await createScratchDatabase(postgres, prefix);
        const opened: Storage[] = [];
        const connect = async () => {
          // Statements named, as the service opens PostgreSQL by default (DATABASE_PREPARED_STATEMENTS).
          const storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4, namedStatements: true, ...(onQuery === undefined ? {} : { onQuery }) });
          opened.push(storage);
          return storage;
        };
        return { storage: await connect(), reopen: connect, close: async () => { for (const s of opened) await s.close(); await scratch.drop(); } };
      },
    });
  }
  return kinds;
}
