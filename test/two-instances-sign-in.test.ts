// CONTRACT section 13 across instances: two services on one PostgreSQL database, each with its own pool and
// its own LISTEN connection, signing in through one real OpenID provider. A sign-in started on one instance
// finishes on the other; a sign-out on one ends the session on the other at once, and closes the live socket
// the session opened there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { openIdIdentityProvider } from '../adapters/openid-client/identity-provider.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { connectLive, type LiveClient } from './support/live-client.ts';
import { signIn, startOidcProvider, type TestAccount, type TestProvider } from './support/oidc-provider.ts';
import { createScratchDatabase, type ScratchDatabase } from './support/scratch-database.ts';
import { startService, type TestService } from './support/service.ts';

const url = process.env.TEST_DATABASE_URL;
const REDIRECT = 'http://localhost:9/api/session/oidc/callback';
const SECRET = 'two-instances-client-secret-88c1';
const ADA: TestAccount = { sub: 'ada-1', email: 'ada@example.com', email_verified: true, name: 'Ada' };

describe('sign-in across two instances on one PostgreSQL', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let scratch: ScratchDatabase;
  let provider: TestProvider;
  let a: TestService;
  let b: TestService;

  async function instance(): Promise<TestService> {
    const storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 });
    const bus = await createPostgresEventBus({ url: scratch.url, events: storage.events, local: createMemoryEventBus() });
    const env = {
      CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: 'console',
      OIDC_CLIENT_SECRET: SECRET, OIDC_REDIRECT_URL: REDIRECT, OIDC_ALLOWED_DOMAINS: 'example.com',
    };
    return startService(env, { storage, bus, identityProvider: openIdIdentityProvider({ issuer: provider.issuer, clientId: 'console', clientSecret: SECRET }) });
  }

  before(async () => {
    scratch = await createScratchDatabase(url!);
    provider = await startOidcProvider({ accounts: [ADA], clients: [{ client_id: 'console', client_secret: SECRET, redirect_uris: [REDIRECT] }] });
    a = await instance();
    b = await instance();
    const seed = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1 });
    await seed.importWorld(fixtureWorld());
    await seed.close();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await provider?.close();
    await scratch?.drop();
  });

  it('a sign-in started on A finishes on B; a sign-out on B ends the session on A at once, and closes its live socket there', async () => {
    const started = await a.ask({ path: '/api/session/oidc' });
    assert.equal(started.status, 302, started.text);
    const flow = String(started.headers['set-cookie']?.[0]).split(';')[0]!;
    const back = await signIn(String(started.headers.location), REDIRECT, ADA.sub);
    const finished = await b.ask({ path: `/api/session/oidc/callback${back.search}`, headers: { cookie: flow } });
    assert.equal(finished.status, 303, finished.text);
    const session = String(finished.headers['set-cookie']?.[0]).split(';')[0]!;

    for (const service of [a, b]) assert.equal((await service.ask({ path: '/api/session', headers: { cookie: session } })).status, 200);
    // A live socket on A, opened with the session, waiting on a key of ada's.
    const socket = (await connectLive(a.port, { thread: '0190f3a0-0000-7000-8000-000000000001' }, { cookie: session })) as LiveClient;
    assert.ok('closed' in socket, JSON.stringify(socket));

    assert.equal((await b.ask({ method: 'DELETE', path: '/api/session', headers: { cookie: session } })).status, 204);
    assert.equal((await a.ask({ path: '/api/session', headers: { cookie: session } })).status, 401, 'ended on A at once');
    assert.equal(await socket.closed, 1008);
  });
});
