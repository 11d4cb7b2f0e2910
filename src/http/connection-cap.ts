import type { Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** A server's count of open connections, and which of them arrived past its cap. */
export interface ConnectionCap {
  /** Whether this connection was accepted while `max` others were open: its requests are refused. */
  readonly isOver: (socket: Duplex) => boolean;
  /** Connections open now, upgraded websockets included. */
  readonly open: () => number;
}

/**
 * Counts every accepted connection until it closes; one accepted while `max` are open is marked.
 * A marked connection is not dropped at once (its client would see a bare reset, or a silence):
 * its request is answered 503 with `Connection: close` by the listener (server.ts), and one that
 * sends nothing is closed by the headers time-out. Upgraded websockets keep their connection and
 * count until they close: each holds a socket and a send buffer just the same.
 */
export function capConnections(server: Server, max: number): ConnectionCap {
  let open = 0;
  const over = new WeakSet<Duplex>();
  server.on('connection', (socket: Duplex) => {
    open += 1;
    if (open > max) over.add(socket);
    socket.once('close', () => {
      open -= 1;
    });
  });
  return { isOver: (socket) => over.has(socket), open: () => open };
}
