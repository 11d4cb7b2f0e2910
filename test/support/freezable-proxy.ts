import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** A loopback TCP proxy in front of a database that can stop delivering bytes without closing anything. */
export interface FreezableProxy {
  /** The target URL with the proxy's host and port. */
  readonly url: string;
  /** From now on, bytes either way are held, as by a network that silently stopped delivering. */
  readonly freeze: () => void;
  /** Delivers what was held, in order, and forwards again. */
  readonly thaw: () => void;
  readonly close: () => Promise<void>;
}

/** Starts a proxy on 127.0.0.1 for the host and port of the postgres:// `target` (or its Unix socket: a host that is a directory). */
export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const to = new URL(target);
  const socketDir = decodeURIComponent(to.hostname);
  const connectUpstream = (): Socket =>
    socketDir.startsWith('/') ? connect(`${socketDir}/.s.PGSQL.${to.port || 5432}`) : connect(Number(to.port || 5432), to.hostname);
  let frozen = false;
  const flushes = new Set<() => void>();
  const sockets = new Set<Socket>();
  const relay = (from: Socket, into: Socket): void => {
    const held: Buffer[] = [];
    const flush = () => {
      for (const chunk of held.splice(0)) into.write(chunk);
    };
    flushes.add(flush);
    from.on('data', (chunk: Buffer) => (frozen ? held.push(chunk) : into.write(chunk)));
    from.once('close', () => {
      flushes.delete(flush);
      into.destroy();
    });
  };
  const server = createServer((client) => {
    const upstream = connectUpstream();
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => socket.destroy());
      socket.once('close', () => sockets.delete(socket));
    }
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const flush of flushes) flush();
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
