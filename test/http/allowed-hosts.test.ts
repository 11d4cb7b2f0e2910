import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fail } from '../../domain/result.ts';
import { createApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logging.ts';
import { attach, createListener, listen, shutdown } from '../../src/server.ts';
import { F } from '../support/fixture-world.ts';
import { ask, type Answer } from '../support/http.ts';
import { connectLive } from '../support/live-client.ts';
import { startFixtureService, startService, type TestService } from '../support/service.ts';
import { builtDemoAgent } from '../support/built.ts';

const ALICE = 'Bearer token-alice';

/** The DNS-rebinding refusal: 421 problem+json whose detail names the setting to change. */
function assertMisdirected(res: Answer, where: string): void {
  assert.equal(res.status, 421, `${where}: ${res.status} ${res.text.slice(0, 200)}`);
  assert.equal(res.headers['content-type'], 'application/problem+json', where);
  const body = res.json();
  assert.equal(body.code, 'host_not_allowed', where);
  assert.equal(body.status, 421, where);
  assert.match(body.detail, /ALLOWED_HOSTS/, where);
  assert.ok(typeof res.headers['x-request-id'] === 'string', where);
}

/** The answer to a raw request (no Host header at all is possible only this way). */
function raw(port: number, request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.on('data', (chunk) => (text += chunk));
    socket.on('close', () => resolve(text));
    socket.on('error', reject);
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`no answer to ${JSON.stringify(request.slice(0, 60))}`));
    }, 5_000).unref();
  });
}

/**
 * Issue 24, item 4: any `Host` was taken as the console origin, so a page on a rebound name
 * (`Host: evil.example:PORT`, `Origin: http://evil.example:PORT`) passed the write guard, and an
 * artifact read built its sandbox policy for `parentOrigin: http://evil.example:PORT`.
 */
describe('DNS rebinding: a Host outside ALLOWED_HOSTS is refused before anything runs', () => {
  let service: TestService;
  let evil: string;
  before(async () => {
    service = await startFixtureService();
    evil = `evil.example:${service.port}`;
  });
  after(() => service.close());

  it('a directive from a rebound page is 421, not 202 (before the write guard, auth and the body)', async () => {
    const res = await service.ask({
      method: 'POST', path: `/api/console/threads/${randomUUID()}/directives`,
      headers: { host: evil, origin: `http://${evil}`, cookie: 'console_session=token-alice', 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'rebound' }),
    });
    assertMisdirected(res, 'directive');
    // Not even the body is read: a malformed one, or no credential, is the same refusal.
    assertMisdirected(await service.ask({ method: 'POST', path: `/api/console/threads/${F.root}/directives`, headers: { host: evil }, body: '{"text":' }), 'malformed body');
  });

  it('an artifact read is 421: no sandbox policy is built for a rebound parent origin', async () => {
    const res = await service.ask({ path: `/api/artifacts/${F.artifact}`, headers: { host: evil, authorization: ALICE } });
    assertMisdirected(res, 'artifact read');
    assert.ok(!res.text.includes('evil.example'), 'the rebound origin is named nowhere');
  });

  it('the API, the console page, the viewer page and a mounted path are 421', async () => {
    for (const path of ['/api/console/threads', '/api/session', '/', `/artifacts/${F.artifact}`, '/assets/viewer.js', '/healthz', '/api/openapi.json', '/no/such/path']) {
      assertMisdirected(await service.ask({ path, headers: { host: evil, authorization: ALICE } }), path);
    }
  });

  it('the live socket handshake is refused 421', async () => {
    assert.deepEqual(await connectLive(service.port, { thread: F.root }, { authorization: ALICE, host: evil, origin: `http://${evil}` }), { refused: 421 });
  });

  it('an absolute-form target naming another host is 421, not answered as if it named ours (requests and the live socket)', async () => {
    const ours = `localhost:${service.port}`;
    const misdirected = (answer: string, where: string) => {
      assert.match(answer, /^HTTP\/1\.1 421 /, where);
      assert.match(answer, /\r\ncontent-type: application\/problem\+json\r\n/i, where);
      assert.match(answer, /"code":"host_not_allowed"/, where);
      assert.ok(!answer.includes(F.root), `${where}: nothing of alice's is answered`);
    };
    for (const target of ['http://evil.example/api/console/threads', `http://evil.example:${service.port}/api/console/threads`, `http://127.0.0.1:${service.port}/api/console/threads`]) {
      misdirected(await raw(service.port, `GET ${target} HTTP/1.1\r\nHost: ${ours}\r\nAuthorization: ${ALICE}\r\nConnection: close\r\n\r\n`), target);
    }
    const handshake = `GET http://evil.example/api/console/live?thread=${F.root}&after=0 HTTP/1.1\r\nHost: ${ours}\r\nAuthorization: ${ALICE}\r\n` +
      'Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n';
    misdirected(await raw(service.port, handshake), 'live socket');
    // Naming our own host (in any case, the port written out) is the same request as its origin form.
    const own = await raw(service.port, `GET http://LOCALHOST:${service.port}/api/console/threads HTTP/1.1\r\nHost: ${ours}\r\nAuthorization: ${ALICE}\r\nConnection: close\r\n\r\n`);
    assert.match(own, /^HTTP\/1\.1 200 /);
    // Userinfo in the target is an error (RFC 9110, 4.2.4), and so is a scheme that is not http(s).
    for (const target of [`http://alice@localhost:${service.port}/api/console/threads`, `ftp://localhost:${service.port}/api/console/threads`]) {
      const answer = await raw(service.port, `GET ${target} HTTP/1.1\r\nHost: ${ours}\r\nAuthorization: ${ALICE}\r\nConnection: close\r\n\r\n`);
      assert.match(answer, /^HTTP\/1\.1 400 /, target);
      assert.match(answer, /"code":"invalid_host"/, target);
    }
  });

  it('the two sandbox paths answer 404 on any other origin, as the spec says', async () => {
    for (const path of ['/artifacts/sandbox', '/artifacts/sandbox.js']) {
      const res = await service.ask({ path, headers: { host: evil } });
      assert.equal(res.status, 404, path);
      assert.equal(res.json().code, 'not_found', path);
    }
  });

  it('a request without Host gets the same refusal', async () => {
    const answer = await raw(service.port, 'GET /api/console/threads HTTP/1.0\r\nAuthorization: Bearer token-alice\r\n\r\n');
    assert.match(answer, /^HTTP\/1\.1 421 /);
    assert.match(answer, /"code":"host_not_allowed"/);
  });

  it('the default hosts answer at the port listened on: localhost, 127.0.0.1 and [::1]; another port or none is refused', async () => {
    for (const host of [`localhost:${service.port}`, `127.0.0.1:${service.port}`, `[::1]:${service.port}`, `LOCALHOST:${service.port}`]) {
      assert.equal((await service.ask({ path: '/api/console/threads', headers: { host, authorization: ALICE } })).status, 200, host);
    }
    for (const host of ['localhost', `localhost:${service.port + 1}`, `127.0.0.2:${service.port}`, `localhost.evil.example:${service.port}`]) {
      assertMisdirected(await service.ask({ path: '/api/console/threads', headers: { host, authorization: ALICE } }), host);
    }
  });

  it('the sandbox origin answers (its host is allowed) and its live socket is still refused 404', async () => {
    const sandbox = `sandbox.localhost:${service.port}`;
    assert.equal((await service.ask({ path: '/artifacts/sandbox.js', headers: { host: sandbox } })).status, 200);
    assert.deepEqual(await connectLive(service.port, { thread: F.root }, { authorization: ALICE, host: sandbox }), { refused: 404 });
  });
});

describe('ALLOWED_HOSTS configured', () => {
  let service: TestService;
  before(async () => {
    // A deployment names its world; the demo answers 127.0.0.1 as well (test/demo-allowed-hosts.test.ts).
    service = await startService({ CONSOLE_WORLD: 'world.json', ALLOWED_HOSTS: 'console.example.test, Other.Example:9000', ARTIFACT_SANDBOX_ORIGIN: 'https://sandbox.example.test', ARTIFACT_VIEWER_ORIGIN: 'https://view.example.test' });
  });
  after(() => service.close());

  it('answers the hosts listed (no port: 80 and 443 alike) and the sandbox and viewer origins, and nothing else', async () => {
    for (const host of ['console.example.test', 'console.example.test:443', 'console.example.test:80', 'other.example:9000', 'view.example.test']) {
      assert.equal((await service.ask({ path: '/healthz', headers: { host } })).status, 200, host);
    }
    // The sandbox host under plain http is not the (https) sandbox origin: the dispatch answers it 404, past the Host check.
    assert.equal((await service.ask({ path: '/artifacts/sandbox.js', headers: { host: 'sandbox.example.test' } })).json().code, 'not_found');
    assert.equal((await service.ask({ path: '/healthz', headers: { host: 'sandbox.example.test' } })).json().code, 'not_found');
    for (const host of [`localhost:${service.port}`, `127.0.0.1:${service.port}`, 'console.example.test:8080', 'other.example', 'evil.example']) {
      assertMisdirected(await service.ask({ path: '/healthz', headers: { host } }), host);
    }
  });
});

describe('the default allowed hosts with PORT=0', () => {
  it('take the port actually listened on', async (t) => {
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', PORT: '0', DATA_DIR: mkdtempSync(join(tmpdir(), 'console-test-')) });
    assert.ok(loaded.ok);
    const server = createListener();
    const log = createLogger('silent');
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env });
    const app = createApp({
      config: loaded.value, log, storage: createMemoryStorage(), bus: createMemoryEventBus(),
      fetchUiResource: async () => fail('no MCP provider in this test'), runner, offers: runner.offers,
    });
    attach(server, app);
    const port = await listen(server, 0, '127.0.0.1');
    t.after(() => shutdown(server, app, 1000));
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`]) assert.equal((await ask(port, { path: '/healthz', headers: { host } })).status, 200, host);
    assertMisdirected(await ask(port, { path: '/healthz', headers: { host: `localhost:${port === 65535 ? 1 : port + 1}` } }), 'another port');
  });
});
