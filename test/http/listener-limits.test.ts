import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { App } from '../../src/app.ts';
import { attach, connectionCounts, createListener, LISTENER_DEFAULTS, listen, shutdown, type ListenerLimits } from '../../src/server.ts';

/** An app that answers 200 after reading the body, and accepts no upgrade (the listener is under test). */
const app: App = {
  onRequest: (req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  },
  onUpgrade: (_req, socket) => socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n'),
  drain: () => {},
  close: async () => {},
};

async function serveListener(limits: ListenerLimits) {
  const server = createListener(limits);
  attach(server, app);
  const port = await listen(server, 0, '127.0.0.1');
  after(() => shutdown(server, app, 100));
  return { server, port };
}

const serve = async (limits: ListenerLimits) => (await serveListener(limits)).port;

/**
 * A raw connection; `text()` is everything the server sent until it closed, `closed` after how
 * long. `from` is the client's address: all of 127.0.0.0/8 is loopback, so each is another client.
 */
async function raw(port: number, send?: string, from = '127.0.0.1') {
  const socket = connect({ port, host: '127.0.0.1', localAddress: from });
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk) => (received += chunk));
  socket.on('error', () => {});
  const opened = Date.now();
  const closed = new Promise<number>((resolve) => socket.once('close', () => resolve(Date.now() - opened)));
  if (send !== undefined) socket.write(send);
  return { socket, text: () => received, closed };
}

const GET = 'GET /x HTTP/1.1\r\nHost: localhost\r\n\r\n';

describe('listener limits', () => {
  it('has the documented time-outs and cap by default', () => {
    const server = createListener();
    assert.equal(server.headersTimeout, 10_000);
    assert.equal(server.requestTimeout, 30_000);
    assert.equal(server.keepAliveTimeout, 5_000);
    assert.equal(LISTENER_DEFAULTS.maxConnections, 1024);
  });

  it('closes a connection that sends nothing, slow headers and a slow body with 408', { timeout: 15_000 }, async () => {
    const port = await serve({ headersTimeoutMs: 500, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 300 });
    const silent = await raw(port);
    const slowHeaders = await raw(port, 'GET /x HTTP/1.1\r\nHost: localhost\r\n');
    const slowBody = await raw(port, 'POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\nabc');
    for (const client of [silent, slowHeaders, slowBody]) {
      const ms = await client.closed;
      assert.ok(ms < 3_500, `closed after ${ms} ms`);
      assert.match(client.text(), /^HTTP\/1\.1 408 /);
    }
  });

  it('closes an idle keep-alive connection after the keep-alive time-out', { timeout: 15_000 }, async () => {
    const port = await serve({ keepAliveTimeoutMs: 300 });
    const client = await raw(port, GET);
    const ms = await client.closed;
    assert.match(client.text(), /^HTTP\/1\.1 200 /);
    assert.ok(ms < 2_000, `closed after ${ms} ms`);
  });

  it('answers a connection past the cap 503 problem+json and closes it, then serves again once one closes', { timeout: 15_000 }, async () => {
    const port = await serve({ maxConnections: 3 });
    const held: Socket[] = [];
    // Three clients, one connection each: the global cap is reached, no client's own.
    for (let i = 0; i < 3; i += 1) held.push((await raw(port, GET, `127.0.0.${i + 2}`)).socket);
    const refused = await raw(port, GET);
    await refused.closed;
    const [head, body] = refused.text().split('\r\n\r\n');
    assert.match(head!, /^HTTP\/1\.1 503 /);
    assert.match(head!, /content-type: application\/problem\+json/i);
    assert.match(head!, /connection: close/i);
    assert.match(head!, /retry-after: 1/i);
    assert.deepEqual(JSON.parse(body!), {
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'Too many open connections: retry later',
      code: 'too_many_connections',
    });

    // A websocket upgrade past the cap is refused the same way.
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/console/live?thread=x`);
    ws.on('error', () => {});
    const [, res] = await once(ws, 'unexpected-response');
    assert.equal(res.statusCode, 503);
    ws.terminate();

    held.pop()!.destroy();
    await new Promise((resolve) => setTimeout(resolve, 100));
    const served = await raw(port, GET, '127.0.0.4');
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.match(served.text(), /^HTTP\/1\.1 200 /);
    served.socket.destroy();
    for (const socket of held) socket.destroy();
  });

  it('one client flooding idle connections past its cap is refused at once with 429, and leaves the others served', { timeout: 20_000 }, async () => {
    const { server, port } = await serveListener({ maxConnections: 30, maxConnectionsPerClient: 20 });
    // 40 idle connections from one client: 20 fit its cap, 20 are refused; none is past the global cap of 30.
    const flood = await Promise.all(Array.from({ length: 40 }, () => raw(port)));
    const answered = (client: Awaited<ReturnType<typeof raw>>) => client.text() !== '';
    const deadline = Date.now() + 3_000;
    while (flood.filter(answered).length < 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    const refused = flood.filter(answered);
    assert.equal(refused.length, 20, 'exactly the connections past the client\'s cap are answered, at once (the headers time-out is 10 s)');
    for (const client of refused) {
      const [head, body] = client.text().split('\r\n\r\n');
      assert.match(head!, /^HTTP\/1\.1 429 /);
      assert.match(head!, /content-type: application\/problem\+json/i);
      assert.match(head!, /connection: close/i);
      assert.match(head!, /retry-after: 1/i);
      assert.match(head!, /x-request-id: [0-9a-f-]{36}/i);
      assert.equal(JSON.parse(body!).code, 'too_many_client_connections');
      assert.ok((await client.closed) < 3_000, 'closed without waiting for the headers time-out');
    }
    assert.deepEqual(connectionCounts(server)(), { open: 20, refused: { client: 20, global: 0 } });

    // Another client is served, on as many connections as it likes up to its own cap.
    const others = await Promise.all(Array.from({ length: 5 }, () => raw(port, GET, '127.0.0.2')));
    await new Promise((resolve) => setTimeout(resolve, 200));
    for (const other of others) assert.match(other.text(), /^HTTP\/1\.1 200 /);
    for (const client of [...flood, ...others]) client.socket.destroy();
  });

  it('applies no per-client cap when told none (behind a proxy): only the global cap refuses', { timeout: 15_000 }, async () => {
    const { server, port } = await serveListener({ maxConnections: 5, maxConnectionsPerClient: null });
    const held = await Promise.all(Array.from({ length: 5 }, () => raw(port, GET)));
    const refused = await raw(port, GET);
    await refused.closed;
    assert.match(refused.text(), /^HTTP\/1\.1 503 /);
    assert.deepEqual(connectionCounts(server)().refused, { client: 0, global: 1 });
    for (const client of held) client.socket.destroy();
  });
});
