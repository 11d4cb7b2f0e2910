// The embedded database's socket: PGlite's one session served over the PostgreSQL wire protocol to
// the service's pooled connections. Plain JavaScript, run in the database's thread (pglite-thread.mjs).
//
// Each time a connection's bytes arrive, every complete message among them (a statement's Parse, Bind,
// Describe, Execute and Sync, as a driver writes them together) goes to PGlite in ONE call, and its
// answer goes back in one write. (pglite-socket, used before, made a database call and a socket write
// for each message: about 0.7 ms a statement against 0.2 ms this way; docs/benchmarks.md, turn.)
//
// One session serves every connection, so it is held for one connection at a time: from that
// connection's first message until PGlite's answer ends with ReadyForQuery "idle" (no transaction
// open, no extended-protocol exchange left half done). Others wait their turn, first come first served.
// A connection that goes away while it holds the session has what it left undone put right (a Sync,
// a rollback) before the next one is served.

import { createServer } from 'node:net';
import { statementCache } from './statement-cache.mjs';

/** How long a connection over the cap may take to send its startup packet before it is closed. */
const REFUSED_STARTUP_MS = 5_000;

/** SSLRequest and GSSENCRequest codes: answered "N" (a local socket; the driver then goes on in the clear). */
const NEGOTIATION_CODES = new Set([80877103, 80877104]);
const CANCEL_CODE = 80877102;
const PROTOCOL_3 = 196608;
const TERMINATE = 0x58; // 'X'
const SYNC = Uint8Array.of(0x53, 0, 0, 0, 4); // 'S'
const ROLLBACK = Buffer.from([0x51, 0, 0, 0, 13, ...Buffer.from('rollback\0')]); // 'Q'
/** A rollback, then a Sync: ignored in an extended exchange's error state, else it aborts what was executed unsynced. */
const ROLLBACK_SYNC = Buffer.concat([ROLLBACK, SYNC]);
const READY = 0x5a; // 'Z'
/** What PGlite answers a `begin` on an idle session; a deferred one's answer, sent at once. */
const BEGUN = Buffer.from([0x43, 0, 0, 0, 10, ...Buffer.from('BEGIN\0'), READY, 0, 0, 0, 5, 0x54]);
const IDLE = 0x49; // 'I'

/**
 * The ErrorResponse a connection over the cap gets before it is closed (SQLSTATE 53300), so the driver
 * reports why rather than a reset socket.
 * @param {number} max
 */
function tooManyConnections(max) {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C53300\0Mtoo many connections to the embedded database (at most ${max})\0\0`);
  const head = Buffer.alloc(5);
  head.write('E', 0);
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * Whether a batch is a simple-protocol `begin` alone (`begin`, `BEGIN;`: what the storage sends to
 * open a transaction), which the socket may answer at once and send with the connection's next batch.
 * @param {Buffer} batch
 */
export function isBegin(batch) {
  if (batch.length < 10 || batch.length > 12 || batch[0] !== 0x51 || batch.readInt32BE(1) !== batch.length - 1) return false;
  return /^begin;?\0$/i.test(batch.toString('latin1', 5));
}

/**
 * Whether an answer ends with ReadyForQuery "idle": the session is free for another connection.
 * @param {Buffer} answer
 */
export function endsIdle(answer) {
  const n = answer.length;
  return n >= 6 && answer[n - 6] === READY && answer.readInt32BE(n - 5) === 5 && answer[n - 1] === IDLE;
}

/**
 * Splits what a connection has received into the complete messages at its front (one slice, as they
 * came) and what is left of an incomplete one. Before the startup packet, messages have no type byte;
 * SSL and GSS negotiation and cancel requests are told apart there.
 * @param {Buffer} buffer
 * @param {boolean} started whether the startup packet has been read
 * @returns {{ kind: 'messages', bytes: Buffer, rest: Buffer, started: boolean, terminate: boolean } | { kind: 'negotiate' | 'cancel', rest: Buffer }}
 */
export function takeMessages(buffer, started) {
  if (!started) {
    if (buffer.length < 8) return { kind: 'messages', bytes: buffer.subarray(0, 0), rest: buffer, started, terminate: false };
    const length = buffer.readInt32BE(0);
    const code = buffer.readInt32BE(4);
    if (length === 8 && NEGOTIATION_CODES.has(code)) return { kind: 'negotiate', rest: buffer.subarray(8) };
    if (length === 16 && code === CANCEL_CODE) return { kind: 'cancel', rest: buffer.subarray(Math.min(16, buffer.length)) };
    if (code !== PROTOCOL_3 || length < 8) throw new Error('not a PostgreSQL protocol 3 startup');
    if (buffer.length < length) return { kind: 'messages', bytes: buffer.subarray(0, 0), rest: buffer, started, terminate: false };
    // The startup packet alone: PGlite reads only it from a call, whatever follows it.
    return { kind: 'messages', bytes: buffer.subarray(0, length), rest: buffer.subarray(length), started: true, terminate: false };
  }
  let end = 0;
  let terminate = false;
  while (buffer.length - end >= 5) {
    const length = 1 + buffer.readInt32BE(end + 1);
    if (length < 5) throw new Error('a message shorter than its header');
    if (buffer.length - end < length) break;
    if (buffer[end] === TERMINATE) {
      terminate = true;
      break;
    }
    end += length;
  }
  return { kind: 'messages', bytes: buffer.subarray(0, end), rest: terminate ? buffer.subarray(0, 0) : buffer.subarray(end), started, terminate };
}

/**
 * Serves `db` (a PGlite) on the Unix socket `path`.
 * @param {import('@electric-sql/pglite').PGlite} db
 * @param {{ path: string, maxConnections: number }} options
 * @returns {Promise<{ close: () => Promise<void> }>}
 */
export async function serveWire(db, { path, maxConnections }) {
  /** @typedef {{ socket: import('node:net').Socket, buffer: Buffer, started: boolean, pending: Buffer[], closed: boolean, ending: boolean, parts: Buffer[], need: number, unnamed: string | null, begun: Buffer | null }} Connection */
  /** @type {Set<Connection>} */
  const connections = new Set();
  /** Connections with work waiting, first come first served. @type {Connection[]} */
  const waiting = [];
  /** The connection the session is held for, between its first message and its idle ReadyForQuery. @type {Connection | null} */
  let holder = null;
  let running = false;
  let stopped = false;
  const plans = statementCache();

  /** Puts right what a connection that went away left undone in the session, then frees it. */
  const release = async () => {
    try {
      await discarded(ROLLBACK_SYNC); // a half-done exchange is rolled back, not committed by the Sync that ends it
      if (db.isInTransaction()) await discarded(ROLLBACK); // an open transaction block
    } catch {
      // PGlite itself failed: nothing more to put right here, and the next statement will say so.
    }
    holder = null;
  };

  /**
   * Runs `bytes` on the session for the socket's own ends, its answer discarded. (Streamed: PGlite keeps the
   * last stream's callback for later calls, so a plain call would hand its answer to the previous batch's.
   * Protocol messages: db.exec would wait for the lock held here.)
   * @param {Buffer} bytes
   */
  const discarded = (bytes) => db.runExclusive(() => db.execProtocolRawStream(bytes, { onRawData: () => {}, syncToFs: false }));

  const pump = async () => {
    if (running || stopped) return;
    running = true;
    try {
      while (!stopped) {
        if (holder !== null && holder.closed) await release();
        const next = holder ?? waiting.find((c) => c.pending.length > 0 && !c.closed) ?? null;
        if (next === null || next.pending.length === 0) break;
        const index = waiting.indexOf(next);
        if (index >= 0) waiting.splice(index, 1);
        // A startup packet is a batch alone (it is always a connection's first); the rest go together.
        const alone = next.pending.length === 1 || next.pending[0][0] === 0;
        const batch = alone ? next.pending[0] : Buffer.concat(next.pending);
        next.pending = alone ? next.pending.slice(1) : [];
        if (holder === null) {
          // The session is idle: the statements the cache let go of are closed now, their answer discarded.
          const closing = plans.closing();
          if (closing !== null) await discarded(closing).catch(() => {}); // a statement not closed stays prepared: harmless
        }
        holder = next;
        if (next.begun === null && isBegin(batch) && !db.isInTransaction()) {
          // A `begin` on an idle session cannot fail: it is answered now and sent with the connection's next
          // batch (one database call and one round trip the fewer for every transaction). The session stays held.
          next.begun = batch;
          if (!next.closed) next.socket.write(BEGUN);
          continue;
        }
        const begun = next.begun;
        next.begun = null;
        const plan = plans.rewrite(batch, next.unnamed);
        next.unnamed = plan.unnamed;
        /** @type {Uint8Array[]} */
        const chunks = [];
        const bytes = begun === null ? plan.bytes : Buffer.concat([begun, plan.bytes]);
        if (bytes.length > 0) {
          try {
            await db.runExclusive(() => db.execProtocolRawStream(bytes, { onRawData: (chunk) => chunks.push(chunk.slice()) }));
          } catch (error) {
            next.socket.destroy(error instanceof Error ? error : new Error(String(error)));
            continue; // closed: released at the loop's top
          }
        }
        let raw = chunks.length === 1 ? Buffer.from(chunks[0].buffer, chunks[0].byteOffset, chunks[0].length) : Buffer.concat(chunks);
        if (begun !== null) {
          // The deferred begin's own answer was sent already.
          if (!raw.subarray(0, BEGUN.length).equals(BEGUN)) {
            next.socket.destroy(new Error('the embedded database answered a deferred begin unexpectedly'));
            continue;
          }
          raw = raw.subarray(BEGUN.length);
        }
        const answer = plan.answered(raw);
        if (!next.closed && answer.length > 0) next.socket.write(answer);
        if (endsIdle(answer)) {
          holder = null;
          next.unnamed = null; // the session's unnamed statement is anyone's once it is idle
        }
        if (holder === null && next.pending.length > 0) waiting.push(next);
        if (next.ending && next.pending.length === 0) next.socket.end(); // its Terminate, once its work is done
      }
    } finally {
      running = false;
    }
  };

  /** Runs the pump; a failure it did not expect cuts the connection it served (released as it closes), never the thread. */
  const serve = () => {
    pump().catch((error) => holder?.socket.destroy(error instanceof Error ? error : new Error(String(error))));
  };

  /** @param {Connection} connection @param {Buffer} data */
  const received = (connection, data) => {
    // A large message (a long text, an artifact) arrives in many chunks: they are kept apart until it is whole,
    // not copied into one buffer at every chunk.
    if (connection.need > 0 && connection.buffer.length + connection.parts.reduce((n, p) => n + p.length, 0) + data.length < connection.need) {
      connection.parts.push(data);
      return;
    }
    connection.buffer = Buffer.concat([connection.buffer, ...connection.parts, data]);
    connection.parts = [];
    connection.need = 0;
    for (;;) {
      let taken;
      try {
        taken = takeMessages(connection.buffer, connection.started);
      } catch (error) {
        connection.socket.destroy(error instanceof Error ? error : new Error(String(error)));
        return;
      }
      connection.buffer = taken.rest;
      if (taken.kind === 'negotiate') {
        connection.socket.write('N');
        continue;
      }
      if (taken.kind === 'cancel') {
        connection.socket.end(); // not supported; the driver's cancel connection is simply closed
        return;
      }
      connection.started = taken.started;
      if (taken.bytes.length > 0) {
        // Copied: the socket's buffer may be reused once this handler returns.
        connection.pending.push(Buffer.from(taken.bytes));
        if (holder !== connection && !waiting.includes(connection)) waiting.push(connection);
        serve();
      }
      if (taken.terminate) {
        // What came before it still runs; the socket is ended once it has.
        connection.ending = true;
        if (connection.pending.length === 0) connection.socket.end(); // holding the session: released as it closes
        return;
      }
      if (taken.bytes.length === 0 || connection.buffer.length === 0) {
        // The length of the incomplete message at the front, once its header is in.
        const rest = connection.buffer;
        if (connection.started && rest.length >= 5) connection.need = 1 + rest.readInt32BE(1);
        return;
      }
    }
  };

  /** Connections over the cap, until they are closed. @type {Set<import('node:net').Socket>} */
  const refused = new Set();

  /**
   * A connection over the cap, refused as PostgreSQL refuses one: its startup packet read first (an SSL request
   * answered "N"), then the error, then the end. Answered before the driver has written its startup packet, it
   * may meet a closed socket as it writes, and report that (EPIPE) rather than why. Closed once the error is
   * written, whatever the client does (a half-open socket would keep close waiting), and after a few seconds
   * without a startup packet.
   * @param {import('node:net').Socket} socket
   */
  const refuse = (socket) => {
    refused.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => refused.delete(socket));
    const late = setTimeout(() => socket.destroy(), REFUSED_STARTUP_MS);
    late.unref();
    let buffer = Buffer.alloc(0);
    socket.on('data', (data) => {
      buffer = Buffer.concat([buffer, data]);
      for (;;) {
        let taken;
        try {
          taken = takeMessages(buffer, false);
        } catch {
          socket.destroy();
          return;
        }
        buffer = taken.rest;
        if (taken.kind === 'negotiate') {
          socket.write('N');
          continue;
        }
        if (taken.kind === 'cancel') socket.end();
        else if (taken.started) socket.end(tooManyConnections(maxConnections), () => socket.destroy());
        else return; // the startup packet is not whole yet
        clearTimeout(late);
        return;
      }
    });
  };

  const server = createServer((socket) => {
    if (connections.size >= maxConnections) {
      refuse(socket);
      return;
    }
    /** @type {Connection} */
    const connection = { socket, buffer: Buffer.alloc(0), started: false, pending: [], closed: false, ending: false, parts: [], need: 0, unnamed: null, begun: null };
    connections.add(connection);
    socket.on('data', (data) => received(connection, data));
    socket.on('error', () => {}); // a client gone away: 'close' follows
    socket.on('close', () => {
      connection.closed = true;
      connection.pending = [];
      connections.delete(connection);
      const index = waiting.indexOf(connection);
      if (index >= 0) waiting.splice(index, 1);
      if (holder === connection) serve();
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve(undefined);
    });
  });
  return {
    close: async () => {
      stopped = true;
      const closed = new Promise((resolve) => server.close(() => resolve(undefined)));
      for (const { socket } of connections) socket.destroy();
      for (const socket of refused) socket.destroy();
      await closed;
      while (running) await new Promise((resolve) => setTimeout(resolve, 5));
    },
  };
}
