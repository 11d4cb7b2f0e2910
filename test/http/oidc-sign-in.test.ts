// CONTRACT section 13 end to end: the service signs people in with a real OpenID Connect provider (oidc-provider,
// started here on 127.0.0.1), its login and consent driven over HTTP. Who joins, who is refused and why, and
// that nothing of the client secret leaves the service.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openIdIdentityProvider } from '../../adapters/openid-client/identity-provider.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { signIn, startOidcProvider, type TestAccount, type TestProvider } from '../support/oidc-provider.ts';
import { startService, type TestService } from '../support/service.ts';

// The registered callback: the provider redirects there; the test reads it and brings its query to the service.
const REDIRECT = 'http://localhost:9/api/session/oidc/callback';
const SECRET = 'the-console-client-secret-5e1d';
const ADA: TestAccount = { sub: 'ada-1', email: 'ada@example.com', email_verified: true, name: 'Ada <b>Lovelace</b>' };
const EVE: TestAccount = { sub: 'eve-2', email: 'eve@elsewhere.org', email_verified: true, name: 'Eve' };
const UNVERIFIED: TestAccount = { sub: 'una-3', email: 'una@example.com', email_verified: false, name: 'Una' };
const BOSS: TestAccount = { sub: 'boss-4', email: 'boss@elsewhere.org', email_verified: true, name: 'Boss' };
const METRICS = 'metrics-token-for-the-sign-in-test';

describe('sign-in with an OpenID Connect provider', () => {
  let provider: TestProvider;
  let service: TestService;

  before(async () => {
    provider = await startOidcProvider({
      accounts: [ADA, EVE, UNVERIFIED, BOSS],
      clients: [{ client_id: 'console', client_secret: SECRET, redirect_uris: [REDIRECT] }, { client_id: 'other', client_secret: 'other-secret-19ab', redirect_uris: [REDIRECT] }],
    });
    const env = {
      OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: SECRET, OIDC_REDIRECT_URL: REDIRECT,
      OIDC_ALLOWED_DOMAINS: 'example.com', OIDC_FIRST_ADMIN: 'boss@elsewhere.org', OIDC_NAME: 'Test IdP', METRICS_TOKEN: METRICS,
      // The refusals below are failed credentials: a budget that holds them all (its own test is below).
      SIGNIN_ATTEMPTS_PER_MINUTE: '100',
    };
    const storage = createMemoryStorage();
    // The fixture world has no admin here: its users are all members, so the first admin rule applies.
    const world = fixtureWorld();
    await storage.importWorld({ ...world, users: world.users.map((u) => ({ ...u, role: 'member' as const })) });
    service = await startService(env, { storage, identityProvider: openIdIdentityProvider({ issuer: provider.issuer, clientId: 'console', clientSecret: SECRET }) });
  });
  after(async () => {
    await service.close();
    await provider.close();
  });

  /** Starts a sign-in at the service: the provider's authorization URL and the browser's flow cookie. */
  async function begin(): Promise<{ location: string; flow: string }> {
    const res = await service.ask({ path: '/api/session/oidc' });
    assert.equal(res.status, 302, res.text);
    const cookie = String(res.headers['set-cookie']?.[0]);
    assert.match(cookie, /^console_sign_in=[A-Za-z0-9_-]{43}; Path=\/api\/session\/oidc\/callback; HttpOnly; SameSite=Lax; Max-Age=600$/);
    return { location: String(res.headers.location), flow: cookie.split(';')[0]! };
  }

  /** Brings the provider's redirect back to the service with the flow cookie. */
  const callback = (url: URL, flow: string | null) =>
    service.ask({ path: `/api/session/oidc/callback${url.search}`, headers: flow === null ? {} : { cookie: flow } });

  const reasonOf = (res: { text: string }) => /data-reason="([a-z_]+)"/.exec(res.text)?.[1];

  async function signedIn(account: TestAccount): Promise<string> {
    const { location, flow } = await begin();
    const res = await callback(await signIn(location, REDIRECT, account.sub), flow);
    assert.equal(res.status, 303, `${res.status} ${reasonOf(res)}`);
    assert.equal(res.headers.location, '/');
    return String(res.headers['set-cookie']?.[0]).split(';')[0]!;
  }

  it('the redirect carries PKCE (S256), state and nonce for the configured client and callback', async () => {
    const url = new URL((await begin()).location);
    assert.equal(url.origin, provider.issuer);
    const q = url.searchParams;
    assert.deepEqual([q.get('client_id'), q.get('redirect_uri'), q.get('response_type'), q.get('code_challenge_method')], ['console', REDIRECT, 'code', 'S256']);
    for (const name of ['state', 'nonce', 'code_challenge']) assert.ok((q.get(name) ?? '').length >= 32, name);
    assert.ok(q.get('scope')!.split(' ').includes('openid'));
    assert.ok(!url.href.includes(SECRET));
  });

  it('a verified email of an allowed domain joins on its first sign-in, and signs in again as the same user', async () => {
    const session = await signedIn(ADA);
    const me = (await service.ask({ path: '/api/session', headers: { cookie: session } })).json() as { id: string; name: string; role: string };
    assert.equal(me.name, ADA.name);
    assert.equal(me.role, 'member');
    const again = await signedIn(ADA);
    assert.notEqual(again, session);
    assert.equal(((await service.ask({ path: '/api/session', headers: { cookie: again } })).json() as { id: string }).id, me.id);
    // Signed out, the session names no one.
    assert.equal((await service.ask({ method: 'DELETE', path: '/api/session', headers: { cookie: session } })).status, 204);
    assert.equal((await service.ask({ path: '/api/session', headers: { cookie: session } })).status, 401);
  });

  it('refuses a replayed callback, one without its cookie, a wrong state and a tampered code, each with a page and no session', async () => {
    const { location, flow } = await begin();
    const url = await signIn(location, REDIRECT, ADA.sub);
    const noCookie = await callback(url, null);
    assert.deepEqual([noCookie.status, reasonOf(noCookie)], [400, 'no_sign_in']);
    const ok = await callback(url, flow);
    assert.equal(ok.status, 303);
    const replayed = await callback(url, flow);
    assert.deepEqual([replayed.status, reasonOf(replayed), replayed.headers['set-cookie']], [400, 'no_sign_in', undefined]);

    const second = await begin();
    const wrongState = new URL(await signIn(second.location, REDIRECT, ADA.sub));
    wrongState.searchParams.set('state', 'x'.repeat(43));
    const mismatched = await callback(wrongState, second.flow);
    assert.deepEqual([mismatched.status, reasonOf(mismatched), mismatched.headers['set-cookie']], [400, 'state_mismatch', undefined]);
    assert.match(String(mismatched.headers['content-type']), /^text\/html/);
    assert.match(String(mismatched.headers['content-security-policy']), /default-src 'none'/);

    const third = await begin();
    const tampered = new URL(await signIn(third.location, REDIRECT, ADA.sub));
    tampered.searchParams.set('code', `${tampered.searchParams.get('code')}x`);
    const refused = await callback(tampered, third.flow);
    assert.deepEqual([refused.status, reasonOf(refused), refused.headers['set-cookie']], [400, 'code_refused', undefined]);
  });

  it('refuses a code replayed into a new sign-in, a code issued to another client, and a callback naming another issuer', async () => {
    const first = await begin();
    const used = await signIn(first.location, REDIRECT, ADA.sub);
    assert.equal((await callback(used, first.flow)).status, 303);
    // The used code, brought with the state of a sign-in of its own: the provider refuses it.
    const second = await begin();
    const replay = new URL(used);
    replay.searchParams.set('state', new URL(second.location).searchParams.get('state')!);
    const replayed = await callback(replay, second.flow);
    assert.deepEqual([replayed.status, reasonOf(replayed), replayed.headers['set-cookie']], [400, 'code_refused', undefined]);

    // The sign-in's own request, made as the other client: its code is the other client's.
    const third = await begin();
    const asOther = new URL(third.location);
    asOther.searchParams.set('client_id', 'other');
    const otherCode = await signIn(asOther.href, REDIRECT, ADA.sub);
    const foreign = await callback(otherCode, third.flow);
    assert.deepEqual([foreign.status, reasonOf(foreign), foreign.headers['set-cookie']], [400, 'code_refused', undefined]);

    const fourth = await begin();
    const elsewhere = new URL(await signIn(fourth.location, REDIRECT, ADA.sub));
    elsewhere.searchParams.set('iss', 'https://evil.example.com');
    const wrongIssuer = await callback(elsewhere, fourth.flow);
    assert.deepEqual([wrongIssuer.status, reasonOf(wrongIssuer), wrongIssuer.headers['set-cookie']], [400, 'token_invalid', undefined]);
  });

  it('refuses an ID token that expired by the time it arrives (the provider\'s clock an hour behind)', async () => {
    const { location, flow } = await begin();
    await provider.setClockOffset(-3600);
    try {
      const res = await callback(await signIn(location, REDIRECT, ADA.sub), flow);
      assert.deepEqual([res.status, reasonOf(res), res.headers['set-cookie']], [400, 'token_invalid', undefined]);
    } finally {
      await provider.setClockOffset(0);
    }
  });

  it('refuses someone neither invited nor of an allowed domain, and an unverified email, with 403; an invite lets them in', async () => {
    for (const account of [EVE, UNVERIFIED]) {
      const { location, flow } = await begin();
      const res = await callback(await signIn(location, REDIRECT, account.sub), flow);
      assert.deepEqual([res.status, reasonOf(res)], [403, 'not_invited'], account.email);
      assert.match(res.text, /Ask an admin of this console to invite your email address/);
    }
    // The first admin joins as admin, and invites eve.
    const boss = await signedIn(BOSS);
    assert.equal(((await service.ask({ path: '/api/session', headers: { cookie: boss } })).json() as { role: string }).role, 'admin');
    const invited = await service.ask({ method: 'POST', path: '/api/admin/invites', body: JSON.stringify({ email: EVE.email }), headers: { cookie: boss } });
    assert.equal(invited.status, 201, invited.text);
    const eve = await signedIn(EVE);
    assert.equal(((await service.ask({ path: '/api/session', headers: { cookie: eve } })).json() as { name: string }).name, 'Eve');
  });

  it('a deactivated user is refused at sign-in, and their sessions end at once', async () => {
    const boss = await signedIn(BOSS);
    const ada = await signedIn(ADA);
    const adaId = ((await service.ask({ path: '/api/session', headers: { cookie: ada } })).json() as { id: string }).id;
    const off = await service.ask({ method: 'PATCH', path: `/api/admin/users/${adaId}`, body: '{"active":false}', headers: { cookie: boss } });
    assert.equal(off.status, 200, off.text);
    assert.equal((await service.ask({ path: '/api/session', headers: { cookie: ada } })).status, 401);
    const { location, flow } = await begin();
    const res = await callback(await signIn(location, REDIRECT, ADA.sub), flow);
    assert.deepEqual([res.status, reasonOf(res), res.headers['set-cookie']], [403, 'deactivated', undefined]);
    await service.ask({ method: 'PATCH', path: `/api/admin/users/${adaId}`, body: '{"active":true}', headers: { cookie: boss } });
  });

  it('counts sign-ins and refusals by reason, and never shows the client secret', async () => {
    const metrics = await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${METRICS}` } });
    const count = (outcome: string) => Number(new RegExp(`console_sign_ins_total\\{method="oidc",outcome="${outcome}"\\} (\\d+)`).exec(metrics.text)?.[1] ?? 0);
    assert.ok(count('signed_in') >= 5, metrics.text);
    for (const reason of ['no_sign_in', 'state_mismatch', 'code_refused', 'token_invalid', 'not_invited', 'deactivated']) assert.ok(count(reason) >= 1, reason);
    assert.ok(!JSON.stringify(service.logs).includes(SECRET), 'the client secret is in a log line');
    const described = await service.ask({ path: '/api/openapi.json' });
    assert.ok(!described.text.includes(SECRET));
  });

  it('a refused callback counts against the client\'s budget of failed credentials: past it, 429 before anything is looked up', async () => {
    const strict = await startService(
      { OIDC_ISSUER: provider.issuer, OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: SECRET, OIDC_REDIRECT_URL: REDIRECT, SIGNIN_ATTEMPTS_PER_MINUTE: '2' },
      { storage: createMemoryStorage(), identityProvider: openIdIdentityProvider({ issuer: provider.issuer, clientId: 'console', clientSecret: SECRET }) },
    );
    try {
      for (let i = 0; i < 2; i++) assert.equal((await strict.ask({ path: '/api/session/oidc/callback?code=x&state=y' })).status, 400);
      const blocked = await strict.ask({ path: '/api/session/oidc/callback?code=x&state=y' });
      assert.equal(blocked.status, 429);
      assert.ok(Number(blocked.headers['retry-after']) > 0);
    } finally {
      await strict.close();
    }
  });
});
