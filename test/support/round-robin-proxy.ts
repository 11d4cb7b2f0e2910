import { createServer, request, type IncomingHttpHeaders } from 'node:http';
import { connect, type AddressInfo } from 'node:net';

/** A reverse proxy of the test's own, as docs/deploy.md asks of a real one: Host kept, scheme and client said. */
export interface RoundRobinProxy {
  readonly port: number;
  /** Which upstream port each request and upgrade went to, in order. */
  readonly routed: number[];
  close(): Promise<void>;
}

/**
 * Forwards each request and websocket upgrade to the next of `upstreams` in turn, keeping `Host`, adding
 * `X-Forwarded-Proto: https` (it stands for a TLS-terminating proxy) and appending the client's address
 * to `X-Forwarded-For`. Loopback only.
 */
export async function startRoundRobinProxy(upstreams: readonly number[]): Promise<RoundRobinProxy> {
  let next = 0;
  const routed: number[] = [];
  const pick = () => {
    const port = upstreams[next++ % upstreams.length]!;
    routed.push(port);
    return port;
  };
  const forwarded = (headers: IncomingHttpHeaders, client: string | undefined): IncomingHttpHeaders => {
    const given = headers['x-forwarded-for'];
    return { ...headers, 'x-forwarded-proto': 'https', 'x-forwarded-for': given === undefined ? client : `${given}, ${client}` };
  };
  const server = createServer((req, res) => {
    const upstream = request({ host: '127.0.0.1', port: pick(), method: req.method, path: req.url, headers: forwarded(req.headers, req.socket.remoteAddress) }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  server.on('upgrade', (req, socket, head) => {
    const upstream = connect(pick(), '127.0.0.1', () => {
      const headers = forwarded(req.headers, req.socket.remoteAddress);
      const lines = Object.entries(headers).flatMap(([name, value]) => (Array.isArray(value) ? value : [value]).map((v) => `${name}: ${v}`));
      upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
      if (head.length > 0) upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    const end = () => {
      upstream.destroy();
      socket.destroy();
    };
    upstream.on('error', end);
    socket.on('error', end);
    upstream.on('close', end);
    socket.on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    routed,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
