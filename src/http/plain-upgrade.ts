import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';

/**
 * Whether a request is a websocket handshake, the one upgrade the service speaks: a GET with
 * `Upgrade: websocket` and a `Sec-WebSocket-Key` (RFC 6455, 4.1). Anything else carrying the header
 * (a POST with a body, a GET without a key) is a plain request and is answered as one.
 */
export const isWebsocketUpgrade = (req: IncomingMessage): boolean =>
  req.method === 'GET' && req.headers['sec-websocket-key'] !== undefined && req.headers.upgrade?.trim().toLowerCase() === 'websocket';

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
 * Answers requests that asked for an upgrade other than a websocket (`h2c`, ...) as the plain
 * HTTP/1.1 requests they also are; call once per server, then hand it each such request. Node
 * hands any request with an `Upgrade` header to the `upgrade` listener, its parser gone and its
 * body (what arrived of it) in `head`; answered from there, its body was lost and its socket left
 * the server's own bookkeeping (time-outs, keep-alive, the connections a shutdown closes). So its
 * head is written back without the upgrade, ahead of what followed it, and the socket is handed to
 * the server again as a new connection, as node's documentation allows: node parses it afresh (the
 * body read, keep-alive as the client asked) and tracks it like any other. The connection cap
 * counts a connection once (connection-cap.ts).
 *
 * A request pipelined behind one still being answered waits for that answer to finish first:
 * node's new parser would queue its answer behind the old one, which the old parser's bookkeeping
 * finishes without ever starting the next (it was never answered). If that answer closes the
 * connection, what was pipelined behind it is not served, as for any request.
 */
export function plainUpgrades(server: Server): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  // Each connection's latest answer. Node's own bookkeeping of it is done once it let go of the
  // socket (its 'finish' listener detaches it): no listener of ours per request, a map entry alone.
  const latest = new WeakMap<Duplex, ServerResponse>();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    latest.set(req.socket, res);
  });
  return (req, socket, head) => {
    // unshift puts a chunk first: what followed the head goes back before the head itself.
    if (head.length > 0) socket.unshift(head);
    socket.unshift(headWithoutUpgrade(req));
    const answering = latest.get(socket);
    if (answering === undefined || answering.socket !== socket) return void server.emit('connection', socket);
    // Until handed back, no listener of node's is on the socket: a reset must not go unheard.
    const onError = () => socket.destroy();
    const handBack = () => {
      answering.off('finish', handBack);
      socket.off('close', handBack);
      socket.off('error', onError);
      // The answer said close (node ends the socket after it) or the client left: nothing behind it is served.
      if (socket.destroyed || socket.writableEnded) return;
      // That answer left the keep-alive time-out armed; the request handed back is not idle.
      (socket as Partial<Socket>).setTimeout?.(0);
      server.emit('connection', socket);
    };
    answering.once('finish', handBack);
    socket.once('close', handBack);
    socket.on('error', onError);
  };
}
