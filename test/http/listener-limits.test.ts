import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { App } from '../../src/app.ts';
import { attach, createListener, LISTENER_DEFAULTS, listen, shutdown, type ListenerLimits } from '../../src/server.ts';

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

async function serve(limits: ListenerLimits) {
  const server = createListener(limits);
  attach(server, app);
  const port = await listen(server, 0, '127.0.0.1');
  after(() => shutdown(server, app, 100));
  return port;
}

/** A raw connection; `text()` is everything the server sent until it closed, `closedAt` when. */
async function raw(port: number, send?: string) {
  const socket = connect(port, '127.0.0.1');
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
    for (let i = 0; i < 3; i += 1) held.push((await raw(port, GET)).socket);
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
    const served = await raw(port, GET);
    await new Promise((resolve) => setTimeout(resolve, 200));
    assert.match(served.text(), /^HTTP\/1\.1 200 /);
    served.socket.destroy();
    for (const socket of held) socket.destroy();
  });
});
