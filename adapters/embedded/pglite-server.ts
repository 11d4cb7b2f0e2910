import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDir } from './data-dir-lock.ts';

/** The `dataDir` that means an in-memory database: nothing persists and nothing is locked (tests). */
export const MEMORY_DATA_DIR = 'memory://';

/**
 * The pool size to give MikroORM on the embedded server. Small on purpose: every socket connection is
 * served by the one PGlite session, one statement at a time, so more connections only queue. (One
 * session also means a `SET` on one connection is seen by all: use `SET LOCAL` inside a transaction.)
 */
export const EMBEDDED_POOL_SIZE = 3;

/** Where the embedded database lives and how many socket connections it accepts. */
export interface EmbeddedPostgresOptions {
  /** A directory (created if missing, locked against a second user), or `memory://`. */
  readonly dataDir: string;
  /** Socket connections accepted; at least the pool size + 2 (default EMBEDDED_POOL_SIZE + 2). */
  readonly maxConnections?: number;
}

/** A running embedded PostgreSQL. */
export interface EmbeddedPostgres {
  /** A postgres:// URL on 127.0.0.1 and an ephemeral port, for the MikroORM driver. */
  readonly url: string;
  /** Stops the socket, closes PGlite (flushing the data dir), then releases the lock; idempotent. */
  readonly close: () => Promise<void>;
}

/**
 * Starts PGlite (PostgreSQL 18 in WebAssembly) on a data dir and serves it over the PostgreSQL wire
 * protocol. The lock is taken first: two PGlite instances on one directory would corrupt it, and
 * PGlite itself locks nothing. The first start of a directory runs initdb (a few seconds).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const inMemory = options.dataDir === MEMORY_DATA_DIR;
  const dataDir = inMemory ? MEMORY_DATA_DIR : resolve(options.dataDir);
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const lock = inMemory ? null : lockDataDir(dataDir);
  let db: PGlite | undefined;
  try {
    db = await PGlite.create(dataDir);
    const server = new PGLiteSocketServer({
      db,
      host: '127.0.0.1',
      port: 0,
      maxConnections: options.maxConnections ?? EMBEDDED_POOL_SIZE + 2,
    });
    await server.start();
    const opened = db;
    let closing: Promise<void> | undefined;
    const close = async () => {
      try {
        await server.stop();
        await opened.close();
      } finally {
        lock?.release();
      }
    };
    return {
      url: `postgres://postgres@${server.getServerConn()}/postgres`,
      close: () => (closing ??= close()), // idempotent: a second call waits for the first
    };
  } catch (error) {
    await db?.close().catch(() => {});
    lock?.release();
    throw error;
  }
}
