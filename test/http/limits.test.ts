import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { windowLimiter } from '../../src/limits/window-limiter.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { startFixtureService, startService, type TestService } from '../support/service.ts';

const JSON_BODY = { 'content-type': 'application/json' };

describe('the window limiter', () => {
  it('blocks a key past its limit until its window ends, and keeps a bounded number of keys', () => {
    let now = 0;
    const limiter = windowLimiter({ limit: 2, windowMs: 60_000, maxKeys: 3, now: () => now });
    assert.equal(limiter.left('a'), 2);
    limiter.record('a');
    assert.equal(limiter.blocked('a'), null);
    assert.equal(limiter.left('a'), 1);
    limiter.record('a');
    assert.equal(limiter.blocked('a'), 60);
    assert.equal(limiter.left('a'), 0);
    now = 30_500;
    assert.equal(limiter.blocked('a'), 30);
    now = 60_000;
    assert.equal(limiter.blocked('a'), null, 'a new window');
    for (const key of ['b', 'c', 'd', 'e']) limiter.record(key), limiter.record(key);
    assert.equal(limiter.blocked('b'), null, 'the oldest key was dropped past maxKeys');
    assert.equal(limiter.blocked('e'), 60);
  });
});

describe('limits with clear answers', () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService({ TRUST_PROXY: 'true', SIGNIN_ATTEMPTS_PER_MINUTE: '3', DIRECTIVES_PER_MINUTE: '2', LIVE_SOCKETS_PER_USER: '2' });
  });
  after(() => service.close());

  const signIn = (token: string, client: string) =>
    service.ask({ method: 'POST', path: '/api/session', headers: { ...JSON_BODY, 'x-forwarded-for': `198.51.100.7, ${client}` }, body: JSON.stringify({ token }) });

  it('429 with Retry-After after 3 failed sign-ins from one client, whatever the token; others are not held up', async () => {
    for (let i = 0; i < 3; i++) assert.equal((await signIn(`wrong-${i}-${randomUUID()}`, '203.0.113.1')).status, 401);
    const refused = await signIn('token-alice', '203.0.113.1');
    assert.equal(refused.status, 429);
    assert.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60);
    assert.equal(refused.json().detail, 'Too many failed credentials from this client: retry later');
    assert.equal(refused.headers['set-cookie'], undefined, 'a blocked client learns nothing of its token');
    assert.equal((await signIn('token-alice', '203.0.113.2')).status, 204, 'another client signs in');
  });

  it('429 for the third directive of a user within the minute', async () => {
    const post = (key: string) => service.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: { ...JSON_BODY, authorization: 'Bearer token-bob' }, body: JSON.stringify({ text: 'Hello' }) });
    const first = await post(randomUUID());
    const second = await post(randomUUID());
    assert.ok(first.status !== 429 && second.status !== 429, `${first.status} ${second.status}`);
    const third = await post(randomUUID());
    assert.equal(third.status, 429);
    assert.ok(Number(third.headers['retry-after']) >= 1);
    assert.equal(third.json().detail, 'Too many directives: retry later');
  });

  it('refuses a third live socket of one user with 429, and takes one again once one closes', async () => {
    const open = async () => connectLive(service.port, { thread: F.root }, { authorization: 'Bearer token-alice' });
    const first = (await open()) as LiveClient;
    const second = (await open()) as LiveClient;
    assert.deepEqual(await open(), { refused: 429 });
    const bob = await connectLive(service.port, { thread: F.shared }, { authorization: 'Bearer token-bob' });
    assert.ok(!('refused' in bob), 'another user is not held up');
    (bob as LiveClient).close();
    first.close();
    await first.closed;
    let third = await open();
    for (let i = 0; i < 40 && 'refused' in third; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      third = await open();
    }
    assert.ok(!('refused' in third), 'a slot is free again');
    (third as LiveClient).close();
    second.close();
  });
});

describe('a UI resource over the size cap', () => {
  let provider: TestMcpServer;
  let service: TestService;
  before(async () => {
    provider = await startMcpServer({ resource: { uri: 'ui://weather/card', text: `<!DOCTYPE html><p>${'x'.repeat(3 * 1024 * 1024)}</p>` } });
    const world = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({ ...world, installations: world.installations.map((i) => (i.id === F.installation ? { ...i, server_url: provider.url } : i)) });
    service = await startService({}, { storage, fetchUiResource: createFetchUiResource({ maxBytes: 1024 * 1024 }) });
  });
  after(async () => {
    await service.close();
    await provider.close();
  });

  it('is 502, with the cause in the log', async () => {
    const res = await service.ask({ path: `/api/artifacts/${F.artifact}`, headers: { authorization: 'Bearer token-alice' } });
    assert.equal(res.status, 502);
    assert.equal(res.json().detail, 'MCP app resource could not be loaded');
    const logged = service.logs.filter((line) => line.msg === 'MCP app resource could not be loaded').map((line) => String(line.reason));
    assert.ok(logged.some((reason) => reason.includes('over 1048576 bytes')), logged.join(' | '));
  });
});
