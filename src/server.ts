import { createServer, type Server } from 'node:http';
import type { App } from './app.ts';

/** Request line and headers up to 64 KiB, so a long sandbox `policy` reaches its 422 instead of a 431. */
export const MAX_HEADER_BYTES = 64 * 1024;

/** The one listener for console, API, live socket and sandbox origin. */
export function createListener(): Server {
  return createServer({ maxHeaderSize: MAX_HEADER_BYTES });
}

/** Hands the server's requests and upgrades to the app. */
export function attach(server: Server, app: App): void {
  server.on('request', app.onRequest);
  server.on('upgrade', app.onUpgrade);
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
