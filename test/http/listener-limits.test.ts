import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import type { Server } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import type { App } from '../../src/app.ts';
import { capConnections } from '../../src/http/connection-cap.ts';
import { attach, connectionCounts, createListener, LISTENER_DEFAULTS, listen, shutdown, type ListenerLimits } from '../../src/server.ts';
import { waitFor } from '../support/wait-for.ts';

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
/** Whether the server has sent a whole head on a connection (its status line and headers). */
const answered = (client: Awaited<ReturnType<typeof raw>>) => client.text().includes('\r\n\r\n');

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
    const { server, port } = await serveListener({ maxConnections: 3 });
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

    // And a CONNECT past the cap: told the service is full (it was 405, as if it were under the cap).
    const connect = await raw(port, 'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n', '127.0.0.9');
    await connect.closed;
    assert.match(connect.text(), /^HTTP\/1\.1 503 [^]*"code":"too_many_connections"/);

    held.pop()!.destroy();
    await waitFor(() => connectionCounts(server)().open === 2, { what: 'the listener to see a held connection closed' });
    const served = await raw(port, GET, '127.0.0.4');
    await waitFor(() => answered(served), { what: 'an answer to the connection under the cap' });
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
    await waitFor(() => others.every(answered), { what: "answers to another client's connections" });
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

  it('a small MAX_CONNECTIONS leaves one client fewer connections than everyone: others are still served', { timeout: 15_000 }, async () => {
    // Eight in all, so two for one client by default: its flood leaves six for the rest.
    const { server, port } = await serveListener({ maxConnections: 8 });
    const flood = await Promise.all(Array.from({ length: 8 }, () => raw(port)));
    const other = await raw(port, GET, '127.0.0.2');
    await waitFor(() => answered(other), { what: "an answer to another client's connection" });
    assert.match(other.text(), /^HTTP\/1\.1 200 /, 'another client is served while one holds all it may');
    assert.deepEqual(connectionCounts(server)().refused, { client: 6, global: 0 });
    for (const client of [...flood, other]) client.socket.destroy();
  });
});

describe('the connection cap per client', () => {
  /** A listener stand-in: the cap only listens for `connection` and reads each socket's address. */
  const accept = (server: EventEmitter, remoteAddress: string) => {
    const socket = Object.assign(new EventEmitter(), { remoteAddress });
    server.emit('connection', socket);
    return socket;
  };

  it('counts an IPv6 client by its /64, and an IPv4-mapped address as its IPv4 one, as the credential limit does', () => {
    const server = new EventEmitter();
    const refused: string[] = [];
    const cap = capConnections(server as Server, { max: 100, perClient: 2 }, (socket) => refused.push((socket as unknown as { remoteAddress: string }).remoteAddress));
    // One subscriber's /64 holds 2^64 addresses: each new one must not bring a fresh budget.
    for (const address of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:db8:1:2:ffff::3']) accept(server, address);
    accept(server, '2001:db8:1:3::1');
    // A dual-stack listener sees IPv4 clients as ::ffff:a.b.c.d: the same client as a.b.c.d.
    for (const address of ['192.0.2.7', '::ffff:192.0.2.7', '::FFFF:192.0.2.7']) accept(server, address);
    assert.deepEqual(refused, ['2001:db8:1:2:ffff::3', '::FFFF:192.0.2.7']);
    assert.deepEqual(cap.refused(), { client: 2, global: 0 });
    assert.equal(cap.open(), 5);
  });

  it('frees a /64 slot when any of its connections closes', () => {
    const server = new EventEmitter();
    const cap = capConnections(server as Server, { max: 100, perClient: 1 }, () => {});
    const first = accept(server, '2001:db8::1');
    accept(server, '2001:db8::2');
    assert.deepEqual(cap.refused(), { client: 1, global: 0 });
    first.emit('close');
    accept(server, '2001:db8::3');
    assert.deepEqual(cap.refused(), { client: 1, global: 0 });
    assert.equal(cap.open(), 1);
  });
});
