// The embedded database's own thread: PGlite (PostgreSQL in WebAssembly) and the socket serving it
// over the PostgreSQL wire protocol. Started by `startEmbeddedPostgres` (pglite-server.ts), which
// holds the data dir's lock. Plain JavaScript, so the thread needs no TypeScript loader.
//
// workerData: { dataDir, maxConnections }. Posts { url } once serving, or { error } when it cannot
// start; on the message 'close' it stops the socket, closes PGlite (flushing the data dir) and posts
// 'closed'.
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';

const port = parentPort;
if (port === null) throw new Error('pglite-thread.mjs runs as a worker thread');
const { dataDir, maxConnections } = workerData;

let db;
let server;
try {
  db = await PGlite.create(dataDir);
  server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections });
  await server.start();
  port.postMessage({ url: `postgres://postgres@${server.getServerConn()}/postgres` });
} catch (error) {
  await db?.close().catch(() => {});
  port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  port.close();
}

port.on('message', async (message) => {
  if (message !== 'close' || server === undefined) return;
  try {
    await server.stop();
    await db.close();
    port.postMessage('closed');
  } catch (error) {
    port.postMessage({ error: error instanceof Error ? error.message : String(error) });
  } finally {
    port.close();
  }
});
