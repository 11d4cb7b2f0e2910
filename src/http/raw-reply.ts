import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import { BASE_HEADERS, type Reply } from './reply.ts';

/** How long a closed connection's client has to read its answer before the socket is cut. */
export const LINGER_MS = 1_000;

/**
 * Writes a reply straight onto a socket no `ServerResponse` owns (a refused upgrade or connection,
 * a request the HTTP parser refused), with `Connection: close`, and closes the socket. `requestId`
 * becomes its `X-Request-Id`.
 *
 * The socket closes when its client closes its side after reading, and is cut {@link LINGER_MS}
 * after the answer at the latest: the listener allows half-open connections, so a socket only
 * ended would stay open for as long as its client kept its side open, outside every time-out and
 * past a shutdown. It is not cut at once: a client whose request is still on its way would see a
 * reset instead of the answer.
 */
export function answerAndClose(socket: Duplex, reply: Reply, requestId?: string): void {
  const body = reply.body !== undefined && typeof reply.body === 'object' && 'json' in reply.body
    ? JSON.stringify(reply.body.json)
    : typeof reply.body === 'string' ? reply.body : '';
  const headers: Record<string, string> = { ...BASE_HEADERS, ...reply.headers };
  if (requestId !== undefined) headers['x-request-id'] = requestId;
  if (reply.status >= 400 && headers['cache-control'] === undefined) headers['cache-control'] = 'no-store';
  headers.connection = 'close';
  headers['content-length'] = String(Buffer.byteLength(body));
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}`);
  const cut = setTimeout(() => socket.destroy(), LINGER_MS);
  cut.unref();
  socket.once('close', () => clearTimeout(cut));
  socket.end(`HTTP/1.1 ${reply.status} ${STATUS_CODES[reply.status] ?? 'Error'}\r\n${lines.join('\r\n')}\r\n\r\n${body}`);
}
