import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { App } from './app.ts';
import { capConnections, defaultPerClientCap, type ConnectionCap } from './http/connection-cap.ts';
import { refuseUpgrade } from './http/edge.ts';
import { clientErrorListener } from './http/parser-refusal.ts';
import { isWebsocketUpgrade, plainUpgrades } from './http/plain-upgrade.ts';
import { answerAndClose } from './http/raw-reply.ts';
import { problem, writeReply, type Reply } from './http/reply.ts';
import type { Failure } from '../domain/errors.ts';

/** Request line and headers up to 64 KiB, so a long sandbox `policy` reaches its 422 instead of a 431. */
export const MAX_HEADER_BYTES = 64 * 1024;

/** How long in-flight requests may finish after a stop signal before their connections are cut. */
export const SHUTDOWN_GRACE_MS = 8_000;

/** The listener's limits (docs/operations.md); each has the service's default. */
export interface ListenerLimits {
  /** A request's line and headers must have arrived this long after it began (else 408, closed). */
  readonly headersTimeoutMs?: number;
  /** A whole request, body included, must have arrived this long after it began (else 408, closed). */
  readonly requestTimeoutMs?: number;
  /** An idle keep-alive connection is closed this long after its last answer. */
  readonly keepAliveTimeoutMs?: number;
  /** Open connections past which a new one is answered 503 and closed (MAX_CONNECTIONS). */
  readonly maxConnections?: number;
  /**
   * Open connections of one client address (an IPv6 one by its /64) past which its new one is
   * answered 429 at once and closed (MAX_CONNECTIONS_PER_CLIENT); at most `maxConnections`, which it
   * is lowered to (config.ts refuses one that is not below it); unset, a quarter of
   * `maxConnections`, at most 64 (connection-cap.ts); null: not applied (behind a proxy every
   * connection comes from the proxy).
   */
  readonly maxConnectionsPerClient?: number | null;
}

export const LISTENER_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
} as const satisfies Required<{ [K in Exclude<keyof ListenerLimits, 'maxConnectionsPerClient'>]: NonNullable<ListenerLimits[K]> }>;

/** What the listener keeps beside node's server: its cap, which also knows the sockets it handed to upgrade. */
interface ListenerState {
  readonly cap: ConnectionCap;
}

const states = new WeakMap<Server, ListenerState>();

/** The answer of a request on a connection past the cap; the connection closes after it. */
const overCap = () => problem({ code: 'too_many_connections' }, { 'retry-after': '1', 'cache-control': 'no-store', connection: 'close' });

/** The answer of a connection past its client's cap, written as it is accepted. */
const overClientCap = () => problem({ code: 'too_many_client_connections' }, { 'retry-after': '1' });

/** The listener's connection counts, for the metrics (read when scraped). */
export function connectionCounts(server: Server): () => { readonly open: number; readonly refused: Readonly<Record<'client' | 'global', number>> } {
  const cap = states.get(server)?.cap;
  return () => ({ open: cap?.open() ?? 0, refused: cap?.refused() ?? { client: 0, global: 0 } });
}

/**
 * The one listener for console, API, live socket and sandbox origin. Slow or idle clients are
 * closed: a connection that has not sent its headers within the headers time-out (a connection
 * that sends nothing included), or its whole request within the request time-out, is answered
 * 408; node checks every second. Upgraded websockets leave these time-outs (their pings decide).
 * A connection past its client's cap is answered 429 as it is accepted, and closed.
 */
export function createListener(limits: ListenerLimits = {}): Server {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections, maxConnectionsPerClient } = { ...LISTENER_DEFAULTS, ...limits };
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
    // Node's own refusal of a missing Host is a bare 400: attach() answers it as every refusal is.
    requireHostHeader: false,
  });
  const perClient = maxConnectionsPerClient === null ? null : Math.min(maxConnectionsPerClient ?? defaultPerClientCap(maxConnections), maxConnections);
  const cap = capConnections(server, { max: maxConnections, perClient }, (socket) => answerAndClose(socket, overClientCap(), randomUUID()));
  states.set(server, { cap });
  return server;
}

/** How many `Host` field lines a request carried: node keeps the first alone in `req.headers`, so the raw list tells. */
function hostLines(req: IncomingMessage): number {
  const raw = req.rawHeaders;
  let count = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  return count;
}

/** A listener refusal of a request's head: answered with `Connection: close`, logged with a fresh request id. */
function listenerRefusal(log: Logger, failure: Failure, headers: Record<string, string> = {}): { readonly id: string; readonly reply: Reply } {
  const id = randomUUID();
  const reply = problem(failure, { 'x-request-id': id, 'cache-control': 'no-store', connection: 'close', ...headers });
  log.info({ reqId: id, status: reply.status, code: failure.code }, 'request refused by the listener');
  return { id, reply };
}

/**
 * The refusal of a request's `Host` lines (RFC 9112, 3.2): an HTTP/1.1 request without one (node's
 * parser answers that with a bare 400), or any request with more than one, which node would answer
 * as if only the first were sent (a proxy in front may have routed it by another). Null for a
 * request with exactly one, or none on HTTP/1.0 (refused 421 at the edge).
 */
function hostLinesRefusal(req: IncomingMessage, log: Logger): { readonly id: string; readonly reply: Reply } | null {
  const lines = req.headers.host === undefined ? 0 : hostLines(req);
  if (lines > 1) return listenerRefusal(log, { code: 'duplicate_host' });
  if (lines === 1 || req.httpVersionMajor !== 1 || req.httpVersionMinor !== 1) return null;
  return listenerRefusal(log, { code: 'missing_host' });
}

/**
 * The refusal of a body in a transfer coding other than `chunked` alone (`gzip, chunked`): node's
 * parser frames it by its chunks and hands on the bytes still coded, which would be read as if they
 * were not. RFC 9112, 6.1: 501. Null for a request without one, or with `chunked` alone.
 */
function transferCodingRefusal(req: IncomingMessage, log: Logger): { readonly id: string; readonly reply: Reply } | null {
  const coding = req.headers['transfer-encoding'];
  if (coding === undefined || coding.trim().toLowerCase() === 'chunked') return null;
  return listenerRefusal(log, { code: 'unsupported_transfer_coding' });
}

/** The refusal of an `Expect` other than `100-continue` (node handles that one): 417 (RFC 9110, 10.1.1). */
function expectationRefusal(log: Logger): { readonly id: string; readonly reply: Reply } {
  return listenerRefusal(log, { code: 'expectation_failed' });
}

/**
 * Hands the server's requests and upgrades to the app; those on connections past a cap are
 * refused, and so are requests the HTTP parser refuses (parser-refusal.ts), and those whose head
 * node would take a guess about: no `Host` or two, a transfer coding it does not decode, an
 * `Expect` it does not meet, a CONNECT (each with `Connection: close`). Only a websocket
 * handshake is an upgrade; any other request with an `Upgrade` header (h2c, a POST) is answered as
 * the plain request it also is (plain-upgrade.ts).
 */
export function attach(server: Server, app: App, log: Logger = pino({ level: 'silent' })): void {
  const state = states.get(server);
  const answerAsPlainHttp = plainUpgrades(server);
  server.on('clientError', clientErrorListener(log));
  const onRequest = (req: IncomingMessage, res: ServerResponse, expectation: boolean): void => {
    const refusal = state?.cap.refusal(req.socket) ?? null;
    // Answered as it was accepted, and closing: what its client sent anyway is not served.
    if (refusal === 'client') return void req.resume();
    if (refusal === 'global') return writeReply(res, overCap());
    const refused = hostLinesRefusal(req, log) ?? transferCodingRefusal(req, log) ?? (expectation ? expectationRefusal(log) : null);
    if (refused !== null) return writeReply(res, refused.reply);
    app.onRequest(req, res);
  };
  server.on('request', (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, false));
  // Node answers an `Expect` other than 100-continue with a bare 417 when no one listens: here it is the problem every refusal is.
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => onRequest(req, res, true));
  server.on('upgrade', (req, socket, head) => {
    const refusal = state?.cap.refusal(socket) ?? null;
    // Answered as it was accepted, and closing (raw-reply.ts): what its client sends is drained.
    if (refusal === 'client') return void socket.resume();
    // A plain one too: it may wait for an answer before node tracks it again, and a shutdown must reach
    // it meanwhile. The cap forgets it as it closes (with its one `close` listener per connection).
    state?.cap.upgrade(socket);
    if (!isWebsocketUpgrade(req)) return answerAsPlainHttp(req, socket, head);
    if (refusal === 'global') return refuseUpgrade(socket, overCap(), randomUUID());
    const badHost = hostLinesRefusal(req, log);
    if (badHost !== null) return refuseUpgrade(socket, badHost.reply, badHost.id);
    app.onUpgrade(req, socket, head);
  });
  // Node closes a CONNECT's connection unanswered when no one listens: it is answered 405 as any
  // method the service does not serve. No tunnel is ever opened (this is no proxy).
  server.on('connect', (req: IncomingMessage, socket: Duplex) => {
    const refusal = state?.cap.refusal(socket) ?? null;
    if (refusal === 'client') return void socket.resume();
    state?.cap.upgrade(socket);
    // Over the cap it is told so, as a request or an upgrade is.
    if (refusal === 'global') return refuseUpgrade(socket, overCap(), randomUUID());
    const refused = listenerRefusal(log, { code: 'method_not_allowed', detail: 'CONNECT is not served: this service is not a proxy' }, { allow: '' });
    refuseUpgrade(socket, refused.reply, refused.id);
  });
}

/** Listens and resolves with the bound port. */
export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const address = server.address();
      resolve(typeof address === 'object' && address !== null ? address.port : port);
    });
  });
}

/**
 * Graceful shutdown: stop accepting, let in-flight requests finish (their answers close their
 * connections), close idle keep-alive connections, release the app; after `graceMs` whatever is
 * still open is cut.
 */
export async function shutdown(server: Server, app: App, graceMs = 10_000): Promise<void> {
  app.drain();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const idle = setInterval(() => server.closeIdleConnections(), 100);
  const deadline = setTimeout(() => {
    server.closeAllConnections();
    // Upgraded sockets left node's bookkeeping: the app closes its websockets as the drain begins,
    // and whatever is left of them (a handshake still under way, a client that never closes) goes here.
    for (const socket of [...(states.get(server)?.cap.upgraded() ?? [])]) socket.destroy();
  }, graceMs);
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(deadline);
  }
  await app.close();
}
