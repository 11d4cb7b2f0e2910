import { createServer, type Server } from 'node:http';
import type { App } from './app.ts';
import { capConnections, type ConnectionCap } from './http/connection-cap.ts';
import { refuseUpgrade } from './http/edge.ts';
import { problem, writeReply } from './http/reply.ts';

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
}

export const LISTENER_DEFAULTS = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1024,
} as const satisfies Required<ListenerLimits>;

const caps = new WeakMap<Server, ConnectionCap>();

/**
 * The one listener for console, API, live socket and sandbox origin. Slow or idle clients are
 * closed: a connection that has not sent its headers within the headers time-out (a connection
 * that sends nothing included), or its whole request within the request time-out, is answered
 * 408; node checks every second. Upgraded websockets leave these time-outs (their pings decide).
 */
export function createListener(limits: ListenerLimits = {}): Server {
  const { headersTimeoutMs, requestTimeoutMs, keepAliveTimeoutMs, maxConnections } = { ...LISTENER_DEFAULTS, ...limits };
  const server = createServer({
    maxHeaderSize: MAX_HEADER_BYTES,
    headersTimeout: headersTimeoutMs,
    requestTimeout: requestTimeoutMs,
    keepAliveTimeout: keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
  });
  caps.set(server, capConnections(server, maxConnections));
  return server;
}

/** The answer of a request on a connection past the cap; the connection closes after it. */
const overCap = () => problem({ code: 'too_many_connections' }, { 'retry-after': '1', 'cache-control': 'no-store', connection: 'close' });

/** Hands the server's requests and upgrades to the app; those on connections past the cap are refused. */
export function attach(server: Server, app: App): void {
  const cap = caps.get(server);
  server.on('request', (req, res) => {
    if (cap?.isOver(req.socket) === true) return writeReply(res, overCap());
    app.onRequest(req, res);
  });
  server.on('upgrade', (req, socket, head) => {
    if (cap?.isOver(socket) === true) return refuseUpgrade(socket, overCap());
    app.onUpgrade(req, socket, head);
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
  const deadline = setTimeout(() => server.closeAllConnections(), graceMs);
  try {
    await closed;
  } finally {
    clearInterval(idle);
    clearTimeout(deadline);
  }
  await app.close();
}
