// The embedded database's own thread: PGlite (PostgreSQL in WebAssembly) and the socket serving it
// over the PostgreSQL wire protocol (pglite-wire.mjs). Started by `startEmbeddedPostgres` (pglite-server.ts), which
// holds the data dir's lock. Plain JavaScript, so the thread needs no TypeScript loader.
//
// workerData: { dataDir, socketPath, maxConnections, settings } (settings: PostgreSQL's, by name). Serves on the Unix socket `socketPath` (named
// by the caller, so its URL is known before the database opens). Posts 'serving' once it listens, or
// { error } when it cannot start; on the message 'close' it stops the socket, closes PGlite (flushing
// the data dir) and posts 'closed'.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { serveWire } from './pglite-wire.mjs';

const port = parentPort;
if (port === null) throw new Error('pglite-thread.mjs runs as a worker thread');
const { dataDir, socketPath, maxConnections, settings } = workerData;

let db;
let server;
// Held while PGlite opens. A thread whose event loop runs out of work (handles, timers) has Node wait,
// before it goes on, for every task V8 runs in the background: here the WebAssembly tier-up compile
// of PostgreSQL, started by the open. Without a timer the open's last await, and the first connection
// after, each waited about 200 ms for it (docs/benchmarks.md, second start). Bounded: an open that never
// settles still ends the thread (status 13, unsettled await) and so the start, 2 minutes on, not never.
const awake = setTimeout(() => {}, 120_000);
try {
  // Given as start parameters (`-c name=value`), after PGlite's own: nothing is written to the data dir.
  const params = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  db = await PGlite.create(dataDir, { startParams: [...PGlite.defaultStartParams, ...params] });
  server = await serveWire(db, { path: socketPath, maxConnections });
  port.postMessage('serving');
} catch (error) {
  await db?.close().catch(() => {});
  port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  port.close();
} finally {
  clearTimeout(awake);
}

port.on('message', async (message) => {
  if (message !== 'close' || server === undefined) return;
  try {
    await server.close();
    await db.close();
    port.postMessage('closed');
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  } finally {
    port.close();
  }
});
