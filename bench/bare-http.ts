import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A bare `node:http` server on a loopback port: no router, no logger, no framework. */
export interface BareServer {
  readonly port: number;
  readonly close: () => Promise<void>;
}

/** Headers node writes by itself, or that belong to one answer only: left out of a recorded answer. */
const PER_ANSWER = new Set(['date', 'connection', 'keep-alive', 'content-length', 'transfer-encoding']);

/** What the project answered once, as a bare server repeats it. */
export function recordedHeaders(headers: Record<string, string | string[] | undefined>): OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => !PER_ANSWER.has(name) && value !== undefined));
}

export async function startBare(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<BareServer> {
  const server = createServer(handle);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Answers every request with the same status, headers and bytes. */
export function startBareStatic(headers: OutgoingHttpHeaders, body: Buffer): Promise<BareServer> {
  return startBare((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
}
