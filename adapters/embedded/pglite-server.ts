import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
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

/** How long a closing database may take to flush before its thread is stopped anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

/** The thread's first word: where it serves, or why it could not start. */
type Started = { readonly url: string } | { readonly error: string };

/**
 * Starts PGlite (PostgreSQL 18 in WebAssembly) on a data dir and serves it over the PostgreSQL wire
 * protocol, on a worker thread of its own (pglite-thread.mjs): the database's work (opening the data
 * dir at start, every statement after) runs beside the service's event loop, not on it, and a start
 * loads the service's modules while the database opens. The lock is taken first, here: two PGlite
 * instances on one directory would corrupt it, and PGlite itself locks nothing. The first start of a
 * directory runs initdb (a few seconds).
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const inMemory = options.dataDir === MEMORY_DATA_DIR;
  const dataDir = inMemory ? MEMORY_DATA_DIR : resolve(options.dataDir);
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const lock = inMemory ? null : await lockDataDir(dataDir);
  const thread = new Worker(new URL('./pglite-thread.mjs', import.meta.url), {
    workerData: { dataDir, maxConnections: options.maxConnections ?? EMBEDDED_POOL_SIZE + 2 },
    // The thread runs plain JavaScript: no TypeScript loader, and none of a test runner's flags.
    execArgv: [],
    env: {},
    stdout: false,
    stderr: false,
  });
  const exited = once(thread, 'exit');
  try {
    const started = await Promise.race([
      once(thread, 'message').then(([message]) => message as Started),
      once(thread, 'error').then(([error]) => ({ error: error instanceof Error ? error.message : String(error) })),
      exited.then(([code]) => ({ error: `the embedded database thread exited with ${String(code)}` })),
    ]);
    if ('error' in started) throw new Error(`the embedded database could not start: ${started.error}`);
    let closing: Promise<void> | undefined;
    const close = async () => {
      try {
        thread.postMessage('close');
        const stop = setTimeout(() => void thread.terminate(), CLOSE_TIMEOUT_MS);
        await exited;
        clearTimeout(stop);
      } finally {
        lock?.release();
      }
    };
    return {
      url: started.url,
      close: () => (closing ??= close()), // idempotent: a second call waits for the first
    };
  } catch (error) {
    await thread.terminate();
    lock?.release();
    throw error;
  }
}
