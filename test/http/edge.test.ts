import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import pino from 'pino';
import * as v from 'valibot';
import { requestListener, upgradeListener } from '../../src/http/edge.ts';
import { sameOriginWriteGuard } from '../../src/http/guards.ts';
import { json, problem, type Reply } from '../../src/http/reply.ts';
import { freezeReply, route } from '../../src/http/route.ts';
import { buildSurface } from '../../src/http/surface.ts';
import { attach, createListener, listen } from '../../src/server.ts';
import { ask } from '../support/http.ts';

/**
 * The edge machinery on a surface of its own: parsing, the status of every refusal, guards,
 * logging. The service's own routes are tested in their files; these routes exist only here.
 */
/** One answer written again and again (as the sandbox script is), and its twin made afresh per request. */
const twin = (): Reply => ({ status: 200, headers: { 'content-type': 'text/plain', 'x-twin': 'yes', 'cache-control': 'max-age=5' }, body: Buffer.from('same bytes') });
const FROZEN = freezeReply(twin());
const FROZEN_ERROR = freezeReply(problem({ code: 'not_found' }));

describe('the HTTP edge', () => {
  const logs: Record<string, any>[] = [];
  const server = createListener();
  let port = 0;
  let draining = false;
  const Body = v.object({ name: v.pipe(v.string(), v.minLength(1)), count: v.optional(v.number()) });

  before(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _e, done) {
        for (const line of chunk.toString().split('\n')) if (line) logs.push(JSON.parse(line));
        done();
      },
    });
    const surface = buildSurface({
      name: 'test',
      owns: (path) => path.startsWith('/t/'),
      guards: [sameOriginWriteGuard],
      routes: [
        route({ method: 'POST', path: '/t/items', summary: 'create', body: Body, handle: ({ body }) => json(201, body) }),
        route({ method: 'GET', path: '/t/items', summary: 'list', handle: () => json(200, []) }),
        route({
          method: 'GET',
          path: '/t/items/:id',
          summary: 'one',
          params: v.object({ id: v.pipe(v.string(), v.uuid('must be a UUID')) }),
          query: v.object({ limit: v.optional(v.pipe(v.string(), v.regex(/^[0-9]+$/, 'must be a number'))) }),
          handle: ({ params }) => json(200, params),
        }),
        route({ method: 'GET', path: '/t/closing', summary: 'an answer that closes its connection', handle: () => json(200, [], { connection: 'close' }) }),
        route({ method: 'GET', path: '/t/boom', summary: 'bug', handle: () => { throw new Error('secret upstream detail'); } }),
        route({ method: 'GET', path: '/t/frozen', summary: 'one frozen answer', handle: () => FROZEN }),
        route({ method: 'GET', path: '/t/fresh', summary: 'the same answer, made afresh', handle: () => twin() }),
        route({ method: 'GET', path: '/t/frozen-error', summary: 'one frozen error', handle: () => FROZEN_ERROR }),
      ],
      headers: { 'x-surface': 'wins', 'cache-control': 'no-cache' },
    });
    const options = {
      log: pino({ level: 'info' }, sink),
      sandboxOrigin: null,
      trustProxy: false,
      // The port listened on (0), and the made-up host the raw requests below send.
      allowedHosts: [{ host: '127.0.0.1', port: 0 }, { host: 'x', port: 80 }],
      sandbox: buildSurface({ name: 'sandbox', owns: () => true, guards: [], routes: [] }),
      surfaces: [surface, buildSurface({ name: 'rest', owns: () => true, guards: [], routes: [] })],
      draining: () => draining,
    };
    // Through the listener's own attach, as the service is: it decides which upgrades reach the edge.
    attach(server, { onRequest: requestListener(options), onUpgrade: upgradeListener(options), drain: () => {}, close: async () => {} });
    port = await listen(server, 0, '127.0.0.1');
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const post = (body: string | Buffer, headers: Record<string, string> = {}) =>
    ask(port, { method: 'POST', path: '/t/items', body, headers: { 'content-type': 'application/json', ...headers } });

  const isProblem = (res: { status: number; headers: Record<string, unknown>; json: () => any }, status: number) => {
    assert.equal(res.status, status);
    assert.equal(res.headers['content-type'], 'application/problem+json');
    const body = res.json();
    assert.equal(body.type, 'about:blank');
    assert.equal(body.status, status);
    assert.equal(typeof body.title, 'string');
    assert.equal(typeof body.detail, 'string');
    return body;
  };

  it('accepts a valid body', async () => {
    const res = await post(JSON.stringify({ name: 'a', count: 2 }));
    assert.equal(res.status, 201);
    assert.deepEqual(res.json(), { name: 'a', count: 2 });
  });

  it('400 for malformed JSON', async () => {
    isProblem(await post('{"name":'), 400);
  });

  it('413 for a body over 1 MiB, declared or streamed', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024) });
    isProblem(await post(big), 413);
    const chunked = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => {
        socket.write('POST /t/items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
        const piece = 'x'.repeat(64 * 1024);
        for (let i = 0; i < 20; i++) socket.write(`${piece.length.toString(16)}\r\n${piece}\r\n`);
      });
      let text = '';
      socket.on('data', (c) => (text += c));
      socket.on('close', () => resolve(text));
      socket.on('error', () => resolve(text));
      setTimeout(() => reject(new Error('no answer')), 5000).unref();
    });
    assert.match(chunked, /^HTTP\/1.1 413/);
  });

  it('415 for a body that is declared as something else', async () => {
    isProblem(await post('name=a', { 'content-type': 'application/x-www-form-urlencoded' }), 415);
  });

  it('422 with errors for a schema failure, naming each path', async () => {
    const body = isProblem(await post(JSON.stringify({ name: '', count: 'x' })), 422);
    assert.deepEqual(body.errors.map((e: { path: string }) => e.path).sort(), ['body.count', 'body.name']);
    const empty = isProblem(await post(''), 422);
    assert.equal(empty.errors[0].path, 'body');
  });

  it('422 for a path id or a query value that fails its schema', async () => {
    const bad = isProblem(await ask(port, { path: '/t/items/not-a-uuid' }), 422);
    assert.equal(bad.errors[0].path, 'path.id');
    const query = isProblem(await ask(port, { path: '/t/items/0190a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b?limit=x' }), 422);
    assert.equal(query.errors[0].path, 'query.limit');
  });

  it('404 for an unknown path; 405 with Allow for a known one', async () => {
    isProblem(await ask(port, { path: '/t/nothing' }), 404);
    isProblem(await ask(port, { path: '/elsewhere' }), 404);
    const res = await ask(port, { method: 'DELETE', path: '/t/items' });
    isProblem(res, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, POST');
    isProblem(await ask(port, { path: '/t/items/%E0%A4%A' }), 404);
  });

  it('a bug is a 500 problem without its message, logged with the request id', async () => {
    const res = await ask(port, { path: '/t/boom', headers: { 'x-request-id': 'trace-1' } });
    const body = isProblem(res, 500);
    assert.doesNotMatch(res.text, /secret upstream detail/);
    assert.equal(body.detail, 'Internal error');
    assert.equal(res.headers['x-request-id'], 'trace-1');
    const logged = logs.find((line) => line.reqId === 'trace-1' && line.msg === 'request failed');
    assert.ok(logged, 'the failure is logged');
    assert.match(logged.err.message, /secret upstream detail/);
  });

  it('the write guard refuses a cross-origin write and lets reads and non-browser clients through', async () => {
    const host = `127.0.0.1:${port}`;
    isProblem(await post('{"name":"a"}', { host, origin: 'http://evil.example' }), 403);
    isProblem(await post('{"name":"a"}', { host, origin: `http://${host}`, 'sec-fetch-site': 'cross-site' }), 403);
    assert.equal((await post('{"name":"a"}', { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin' })).status, 201);
    assert.equal((await post('{"name":"a"}', { host })).status, 201);
    const read = await ask(port, { path: '/t/items', headers: { host, origin: 'http://evil.example' } });
    assert.equal(read.status, 200);
  });

  it('logs one line per request with id, method, path, status and duration, and never a credential', async () => {
    await ask(port, {
      path: '/t/items?token=query-secret',
      headers: { authorization: 'Bearer header-secret', cookie: 'console_session=cookie-secret', 'x-request-id': 'trace-2' },
    });
    const line = logs.find((l) => l.reqId === 'trace-2' && l.msg === 'request');
    assert.ok(line);
    assert.equal(line.method, 'GET');
    assert.equal(line.path, '/t/items');
    assert.equal(line.status, 200);
    assert.equal(typeof line.ms, 'number');
    const all = JSON.stringify(logs);
    for (const secret of ['header-secret', 'cookie-secret', 'query-secret']) assert.ok(!all.includes(secret), secret);
  });

  it('a Host header that is not a host is 400, never an origin', async () => {
    const res = await ask(port, { path: '/t/items', headers: { host: '[zz' } });
    isProblem(res, 400);
    assert.equal(res.headers['cache-control'], 'no-store', 'no error is cacheable');
  });

  it('an Upgrade other than websocket is ignored: the request (its body too) is answered as plain HTTP, on a connection that goes on serving', async () => {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let text = '';
    socket.on('data', (c) => (text += c));
    const answered = async (count: number) => {
      for (let waited = 0; (text.match(/HTTP\/1\.1 /g) ?? []).length < count || !text.trimEnd().endsWith('}'); waited += 20) {
        if (waited > 5_000) throw new Error(`no answer: ${text}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    };
    const body = '{"name":"h2c"}';
    socket.write(
      'POST /t/items HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n' +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await answered(1);
    assert.match(text, /^HTTP\/1\.1 201 /);
    assert.match(text, /\{"name":"h2c"\}$/);
    // The same connection, back in node's hands, serves the next request (an upgrade again, this time).
    socket.write('POST /t/items HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: upgrade\r\nContent-Type: application/json\r\nContent-Length: 14\r\n\r\n{"name":"two"}');
    await answered(2);
    assert.match(text, /\{"name":"two"\}$/);
    socket.destroy();
  });

  /**
   * Writes `bytes` at once on a fresh connection and reads the answers, each whole (by its
   * Content-Length), until `count` have come or the server closed the connection (5 s at most).
   */
  async function pipelined(bytes: string, count: number) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    let received = Buffer.alloc(0);
    let closed = false;
    socket.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    socket.on('close', () => (closed = true));
    const answers = () => {
      const found: { status: number; head: string; body: string }[] = [];
      let rest = received.toString('latin1');
      for (;;) {
        const end = rest.indexOf('\r\n\r\n');
        if (end < 0) break;
        const head = rest.slice(0, end);
        const length = Number(/\r\ncontent-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (rest.length < end + 4 + length) break;
        found.push({ status: Number(head.slice(9, 12)), head, body: rest.slice(end + 4, end + 4 + length) });
        rest = rest.slice(end + 4 + length);
      }
      return found;
    };
    const wait = async (n: number) => {
      for (let waited = 0; answers().length < n && !closed && waited < 5_000; waited += 20) await new Promise((resolve) => setTimeout(resolve, 20));
      return answers();
    };
    socket.write(bytes);
    return { socket, answers: await wait(count), closed: () => closed, wait };
  }

  const h2cPost = (name: string, extra = '') => {
    const body = JSON.stringify({ name });
    return (
      'POST /t/items HTTP/1.1\r\nHost: x\r\nConnection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n' +
      `${extra}Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`
    );
  };

  it('an h2c request pipelined behind a request still being answered is answered too, in order, and the connection goes on serving', async () => {
    const behindGet = await pipelined(`GET /t/items HTTP/1.1\r\nHost: x\r\n\r\n${h2cPost('after')}`, 2);
    assert.deepEqual(behindGet.answers.map((a) => [a.status, a.body]), [[200, '[]'], [201, '{"name":"after"}']]);
    behindGet.socket.destroy();

    const three = await pipelined(h2cPost('one') + h2cPost('two') + h2cPost('three'), 3);
    assert.deepEqual(three.answers.map((a) => a.body), ['{"name":"one"}', '{"name":"two"}', '{"name":"three"}']);
    assert.ok(three.answers.every((a) => a.status === 201 && !/\r\nconnection: close/i.test(a.head)), 'kept alive');
    // Still a keep-alive HTTP connection: a plain request after them is served on it.
    three.socket.write('GET /t/items HTTP/1.1\r\nHost: x\r\n\r\n');
    assert.deepEqual((await three.wait(4)).map((a) => a.status), [201, 201, 201, 200]);
    three.socket.destroy();
  });

  it('an h2c request pipelined behind an answer that closes the connection is not answered, and the connection closes', async () => {
    const behindClose = await pipelined(`GET /t/closing HTTP/1.1\r\nHost: x\r\n\r\n${h2cPost('late')}`, 2);
    assert.deepEqual(behindClose.answers.map((a) => a.status), [200]);
    assert.ok(behindClose.closed(), 'closed after the answer that said so');
  });

  it('a request with Upgrade: websocket that is not a GET handshake with a key is answered as plain HTTP', async () => {
    const body = '{"name":"ws"}';
    const post = await pipelined(
      'POST /t/items HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n' +
        `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      1,
    );
    assert.deepEqual(post.answers.map((a) => [a.status, a.body]), [[201, body]]);
    post.socket.destroy();
    const noKey = await pipelined('GET /t/items HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\n\r\n', 1);
    assert.deepEqual(noKey.answers.map((a) => [a.status, a.body]), [[200, '[]']]);
    noKey.socket.destroy();
  });

  it('an invented request id that is not a plain token is replaced', async () => {
    const res = await ask(port, { path: '/t/items', headers: { 'x-request-id': 'a b<script>' } });
    assert.notEqual(res.headers['x-request-id'], 'a b<script>');
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  });

  /** An answer's headers, but those that belong to one answer (its date, its request id). */
  const steady = (headers: Record<string, unknown>) => Object.fromEntries(Object.entries(headers).filter(([name]) => name !== 'date' && name !== 'x-request-id'));

  it('writes a frozen answer (its headers prepared once) exactly as the same answer made afresh, with a request id of its own each time', async () => {
    const fresh = await ask(port, { path: '/t/fresh' });
    const frozen = [await ask(port, { path: '/t/frozen' }), await ask(port, { path: '/t/frozen' })];
    for (const res of frozen) {
      assert.equal(res.status, fresh.status);
      assert.equal(res.text, 'same bytes');
      assert.deepEqual(steady(res.headers), steady(fresh.headers));
    }
    // The surface's headers win over the reply's; the base ones and the length are there.
    assert.equal(fresh.headers['x-surface'], 'wins');
    assert.equal(fresh.headers['cache-control'], 'no-cache');
    assert.equal(fresh.headers['x-content-type-options'], 'nosniff');
    assert.equal(fresh.headers['content-length'], String('same bytes'.length));
    const ids = new Set([fresh, ...frozen].map((res) => res.headers['x-request-id']));
    assert.equal(ids.size, 3);
    const head = await ask(port, { method: 'HEAD', path: '/t/frozen' });
    assert.deepEqual(steady(head.headers), steady(fresh.headers));
    assert.equal(head.text, '');
  });

  it("a frozen error keeps its surface's headers, and a frozen answer still says close while draining", async () => {
    const error = await ask(port, { path: '/t/frozen-error' });
    assert.equal(error.status, 404);
    assert.equal(error.headers['content-type'], 'application/problem+json');
    assert.equal(error.headers['cache-control'], 'no-cache');
    assert.equal(error.json().code, 'not_found');
    // A raw keep-alive request: node's client would ask for close itself.
    const connectionHeader = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1', () => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`));
        let text = '';
        socket.on('data', (chunk) => {
          text += chunk.toString('latin1');
          if (!text.includes('\r\n\r\n')) return;
          socket.destroy();
          resolve(/\r\nconnection: ([^\r]*)/i.exec(text)?.[1] ?? '');
        });
        socket.on('error', reject);
      });
    for (const path of ['/t/frozen', '/t/fresh']) assert.equal((await connectionHeader(path)).toLowerCase(), 'keep-alive', path);
    draining = true;
    try {
      for (const path of ['/t/frozen', '/t/fresh']) assert.equal((await connectionHeader(path)).toLowerCase(), 'close', path);
    } finally {
      draining = false;
    }
  });

  it('gives every request an id of its own', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => ask(port, { path: i % 2 === 0 ? '/t/frozen' : '/t/items' })));
    const ids = answers.map((res) => String(res.headers['x-request-id']));
    for (const id of ids) assert.match(id, /^[0-9a-f-]{36}$/);
    assert.equal(new Set(ids).size, ids.length);
    // And its log line carries that id, once.
    for (const id of ids.slice(0, 20)) assert.equal(logs.filter((line) => line.reqId === id && line.msg === 'request').length, 1, id);
  });
});
