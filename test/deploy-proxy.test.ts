import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { buildCsp } from '../domain/csp.ts';
import { sandboxUrl } from '../domain/sandbox-policy.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { ask } from './support/http.ts';
import { connectLive, typesOf, type LiveClient } from './support/live-client.ts';
import { startRoundRobinProxy, type RoundRobinProxy } from './support/round-robin-proxy.ts';
import { createScratchDatabase, type ScratchDatabase } from './support/scratch-database.ts';
import { startService, type TestService } from './support/service.ts';

const url = process.env.TEST_DATABASE_URL;
const CONSOLE = 'console.example.test';
const SANDBOX = 'sandbox.example.test';

/** docs/deploy.md as a test: two instances on one PostgreSQL, behind a proxy that keeps Host and says the scheme. */
describe('two instances behind a reverse proxy (docs/deploy.md)', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let scratch: ScratchDatabase;
  let a: TestService;
  let b: TestService;
  let proxy: RoundRobinProxy;

  async function instance(): Promise<TestService> {
    const storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 });
    const bus = await createPostgresEventBus({ url: scratch.url, events: storage.events, local: createMemoryEventBus() });
    return startService(
      { CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, TRUST_PROXY: 'true', ARTIFACT_VIEWER_ORIGIN: `https://${CONSOLE}`, ARTIFACT_SANDBOX_ORIGIN: `https://${SANDBOX}`, SIGNIN_ATTEMPTS_PER_MINUTE: '2' },
      { storage, bus },
    );
  }

  before(async () => {
    scratch = await createScratchDatabase(url!);
    const seed = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1 });
    await seed.importWorld(fixtureWorld());
    await seed.close();
    a = await instance();
    b = await instance();
    proxy = await startRoundRobinProxy([a.port, b.port]);
  });
  after(async () => {
    await proxy?.close();
    await a?.close();
    await b?.close();
    await scratch?.drop();
  });

  it('a socket through the proxy sees, in order, the run of a directive the proxy sent to the other instance', async () => {
    const key = randomUUID();
    const socket = (await connectLive(proxy.port, { thread: key, after: '0' }, { authorization: 'Bearer token-alice', host: CONSOLE }));
    assert.ok(!('refused' in socket), JSON.stringify(socket));
    const live = socket as LiveClient;
    const socketOn = proxy.routed.at(-1);
    const res = await ask(proxy.port, {
      method: 'POST', path: `/api/console/threads/${key}/directives`,
      headers: { host: CONSOLE, authorization: 'Bearer token-alice', 'content-type': 'application/json', origin: `https://${CONSOLE}` },
      body: JSON.stringify({ text: 'Hello through the proxy' }),
    });
    assert.equal(res.status, 202, res.text);
    assert.notEqual(proxy.routed.at(-1), socketOn, 'the directive went to the other instance');
    const events = await live.until((all) => all.some((e) => e.type === 'reflex_asleep'), 30_000);
    live.close();
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
    assert.equal(typesOf(events).at(-1), 'reflex_asleep');
  });

  it('serves the sandbox origin as its own site under the forwarded scheme, on either instance', async () => {
    const policy = { parentOrigin: `https://${CONSOLE}`, csp: { resourceDomains: [], connectDomains: ['https://api.example.com'], frameDomains: [], baseUriDomains: [] } };
    const page = new URL(sandboxUrl(`https://${SANDBOX}`, policy));
    for (let i = 0; i < 2; i++) {
      const res = await ask(proxy.port, { path: page.pathname + page.search, headers: { host: SANDBOX } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers['content-security-policy'], buildCsp(policy, 'proxy'));
    }
    const onConsole = await ask(proxy.port, { path: page.pathname + page.search, headers: { host: CONSOLE } });
    assert.equal(onConsole.status, 404, 'the sandbox paths are not on the console site');
  });

  it("counts failed sign-ins by the client address the proxy appended, not by what the client claims", async () => {
    // Tokens of distinct prefixes: only the client limit can apply.
    const signIn = (claimed: string, n: number) =>
      ask(proxy.port, { method: 'POST', path: '/api/session', headers: { host: CONSOLE, 'content-type': 'application/json', 'x-forwarded-for': claimed }, body: JSON.stringify({ token: `t${n}-${randomUUID()}` }) });
    // Each instance counts on its own: two failures on each, whatever address the client claims each time.
    for (let i = 0; i < 4; i++) assert.equal((await signIn(`203.0.113.${i}`, i)).status, 401);
    assert.equal((await signIn('203.0.113.99', 99)).status, 429);
  });
});
