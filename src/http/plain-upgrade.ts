import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** Whether a request asks for the one upgrade the service speaks: a websocket. */
export const isWebsocketUpgrade = (req: IncomingMessage): boolean => req.headers.upgrade?.trim().toLowerCase() === 'websocket';

/**
 * The request's line and headers as the client sent them, less its `Upgrade` header and the
 * `upgrade` token of its `Connection` header (a `Connection` left empty goes too). Node parsed them
 * already, so what is written back parses again; latin1 keeps each byte of a value as it came.
 */
export function headWithoutUpgrade(req: IncomingMessage): Buffer {
  const lines = [`${req.method ?? 'GET'} ${req.url ?? '/'} HTTP/${req.httpVersion}`];
  const raw = req.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    let value = raw[i + 1]!;
    const lower = name.toLowerCase();
    if (lower === 'upgrade') continue;
    if (lower === 'connection') {
      value = value
        .split(',')
        .map((token) => token.trim())
        .filter((token) => token !== '' && token.toLowerCase() !== 'upgrade')
        .join(', ');
      if (value === '') continue;
    }
    lines.push(`${name}: ${value}`);
  }
  return Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1');
}

/**
 * Answers a request that asked for an upgrade other than a websocket (`h2c`, ...) as the plain
 * HTTP/1.1 request it also is. Node hands any request with an `Upgrade` header to the `upgrade`
 * listener, its parser gone and its body (what arrived of it) in `head`; answered from there, its
 * body was lost and its socket left the server's own bookkeeping (time-outs, keep-alive, the
 * connections a shutdown closes). So its head is written back without the upgrade, ahead of what
 * followed it, and the socket is handed to the server again as a new connection, as node's
 * documentation allows: node parses it afresh (the body read, keep-alive as the client asked) and
 * tracks it like any other. The connection cap counts a connection once (connection-cap.ts).
 */
export function answerAsPlainHttp(server: Server, req: IncomingMessage, socket: Duplex, head: Buffer): void {
  // unshift puts a chunk first: what followed the head goes back before the head itself.
  if (head.length > 0) socket.unshift(head);
  socket.unshift(headWithoutUpgrade(req));
  server.emit('connection', socket);
}
