import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
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

/**
 * PostgreSQL's settings for the embedded database, beside PGlite's own start parameters. PGlite runs one
 * backend (single-user mode) and keeps its shared memory in the WebAssembly memory, which every start
 * allocates and clears: PostgreSQL's defaults (128 MB of shared buffers, shared memory sized for 100
 * connections) made a reopen about 45 ms slower (docs/benchmarks.md, second start). Pages beyond the
 * buffers are read through the operating system's file cache.
 */
export const EMBEDDED_SETTINGS: Readonly<Record<string, string>> = Object.freeze({ shared_buffers: '32MB', max_connections: '10' });

/**
 * V8's flags for a process that runs the embedded database, set before its first start. PGlite's open starts V8's
 * tier-up of PostgreSQL's WebAssembly to optimized code, by default on as many background threads as the machine
 * has cores: during a start those took about 0.45 s of CPU from the service's own loading and its agents' starts
 * (two cores: docs/benchmarks.md, second start). One thread compiles it now; the tier-up still happens, later.
 */
export const EMBEDDED_V8_FLAGS: readonly string[] = ['--wasm-num-compilation-tasks=1'];

let flagsSet = false;

/** Sets {@link EMBEDDED_V8_FLAGS}, once per process. */
function setEmbeddedFlags(): void {
  if (flagsSet) return;
  for (const flag of EMBEDDED_V8_FLAGS) setFlagsFromString(flag);
  flagsSet = true;
}

/** Where the embedded database lives and how many socket connections it accepts. */
export interface EmbeddedPostgresOptions {
  /** A directory (created if missing, locked against a second user), or `memory://`. */
  readonly dataDir: string;
  /** Socket connections accepted; at least the pool size + 2 (default EMBEDDED_POOL_SIZE + 2). */
  readonly maxConnections?: number;
}

/** A running embedded PostgreSQL. */
export interface EmbeddedPostgres {
  /** A postgres:// URL of its Unix socket (the socket's directory as the host), for the MikroORM driver. */
  readonly url: string;
  /** Stops the socket, closes PGlite (flushing the data dir), then releases the lock; idempotent. */
  readonly close: () => Promise<void>;
}

/** How long a closing database may take to flush before its thread is stopped anyway. */
const CLOSE_TIMEOUT_MS = 10_000;

/** The thread's first word: that it serves, or why it could not start. */
type Started = 'serving' | { readonly error: string };

/** An embedded PostgreSQL being started: its URL, known at once, and the database once it serves. */
export interface EmbeddedPostgresStart {
  /** Where it will serve (`EmbeddedPostgres.url`): a client may be made ready with it while the database opens. */
  readonly url: string;
  /** The database, once it serves; rejects when it cannot start. */
  readonly started: Promise<EmbeddedPostgres>;
}

/**
 * Starts PGlite (PostgreSQL 18 in WebAssembly) on a data dir and serves it over the PostgreSQL wire
 * protocol, on a worker thread of its own (pglite-thread.mjs): the database's work (opening the data
 * dir at start, every statement after) runs beside the service's event loop, not on it, and a start
 * loads the service's modules while the database opens. The lock is taken first, here: two PGlite
 * instances on one directory would corrupt it, and PGlite itself locks nothing. The first start of a
 * directory runs initdb (a few seconds).
 */
export function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  return embeddedPostgres(options).started;
}

/**
 * {@link startEmbeddedPostgres}, with the URL it will serve at answered at once: it serves on a Unix
 * socket in a directory of its own under the system's temporary directory (a short path: a socket's
 * path is limited to about 100 bytes), removed when it closes. A start makes MikroORM ready (its
 * metadata discovered) with it while the database opens (docs/benchmarks.md, second start).
 */
export function embeddedPostgres(options: EmbeddedPostgresOptions): EmbeddedPostgresStart {
  setEmbeddedFlags();
  let socketDir: string;
  try {
    socketDir = mkdtempSync(join(tmpdir(), 'console-pg-'));
  } catch (error) {
    // Answered as a start that failed, as every other cause is (never thrown at the caller).
    return { url: 'postgres://postgres@localhost/postgres', started: Promise.reject(error) };
  }
  // pg's convention: the host is the socket's directory, the port names the socket (.s.PGSQL.<port>).
  const url = `postgres://postgres@${encodeURIComponent(socketDir)}:5432/postgres`;
  const started = serve(options, join(socketDir, '.s.PGSQL.5432'));
  const removeDir = () => rmSync(socketDir, { recursive: true, force: true });
  return {
    url,
    started: started.then(
      (db) => ({ url, close: () => db.close().finally(removeDir) }),
      (error: unknown) => {
        removeDir();
        throw error;
      },
    ),
  };
}

async function serve(options: EmbeddedPostgresOptions, socketPath: string): Promise<{ close: () => Promise<void> }> {
  const inMemory = options.dataDir === MEMORY_DATA_DIR;
  const dataDir = inMemory ? MEMORY_DATA_DIR : resolve(options.dataDir);
  if (!inMemory) mkdirSync(dataDir, { recursive: true });
  const lock = inMemory ? null : await lockDataDir(dataDir);
  const thread = new Worker(new URL('./pglite-thread.mjs', import.meta.url), {
    workerData: { dataDir, socketPath, maxConnections: options.maxConnections ?? EMBEDDED_POOL_SIZE + 2, settings: EMBEDDED_SETTINGS },
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
    if (started !== 'serving') throw new Error(`the embedded database could not start: ${started.error}`);
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
      close: () => (closing ??= close()), // idempotent: a second call waits for the first
    };
  } catch (error) {
    await thread.terminate();
    lock?.release();
    throw error;
  }
}
