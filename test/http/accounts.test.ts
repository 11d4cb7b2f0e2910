// CONTRACT section 13 over HTTP: personal access tokens, admins, and what a deactivation stops at once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';

describe('personal access tokens and admins', () => {
  let service: TestService;
  const alice = { authorization: 'Bearer token-alice' };
  const bob = { authorization: 'Bearer token-bob' };

  before(async () => {
    const storage = createMemoryStorage();
    const world = fixtureWorld();
    // alice is the world's admin; bob a member.
    await storage.importWorld({ ...world, users: world.users.map((u) => (u.id === 'alice' ? { ...u, role: 'admin' as const } : u)) });
    service = await startService({}, { storage });
  });
  after(() => service.close());

  const post = (path: string, body: unknown, headers: Record<string, string>) =>
    service.ask({ method: 'POST', path, body: JSON.stringify(body), headers: { 'content-type': 'application/json', ...headers } });

  it('a token is shown once, listed without it, works as a bearer token, and stops at once when revoked', async () => {
    const created = await post('/api/account/tokens', { name: 'ci <script>', expires_in_days: 30 }, bob);
    assert.equal(created.status, 201, created.text);
    const token = created.json() as { id: string; token: string; name: string; expires_at: string; last_used_at: null };
    assert.match(token.token, /^cpat_[A-Za-z0-9_-]{43}$/);
    assert.equal(token.name, 'ci <script>');
    assert.equal(created.headers['cache-control'], 'no-store');
    const days = (Date.parse(token.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);

    const me = await service.ask({ path: '/api/session', headers: { authorization: `Bearer ${token.token}` } });
    assert.deepEqual(me.json(), { id: 'bob', name: 'Bob', role: 'member' });
    const listed = (await service.ask({ path: '/api/account/tokens', headers: bob })).json() as Record<string, unknown>[];
    const mine = listed.find((t) => t.id === token.id);
    assert.ok(mine !== undefined && !('token' in mine), 'listed without the token');
    assert.notEqual(mine.last_used_at, null, 'its use is shown');
    assert.ok(!JSON.stringify(listed).includes(token.token));
    // Someone else's token is not theirs to see or revoke.
    assert.ok(!JSON.stringify((await service.ask({ path: '/api/account/tokens', headers: alice })).json()).includes(token.id));
    assert.equal((await service.ask({ method: 'DELETE', path: `/api/account/tokens/${token.id}`, headers: alice })).status, 404);

    assert.equal((await service.ask({ method: 'DELETE', path: `/api/account/tokens/${token.id}`, headers: bob })).status, 204);
    assert.equal((await service.ask({ path: '/api/session', headers: { authorization: `Bearer ${token.token}` } })).status, 401);
    assert.equal((await service.ask({ method: 'DELETE', path: `/api/account/tokens/${token.id}`, headers: bob })).status, 404, 'revoked already');
    assert.ok(!JSON.stringify(service.logs).includes(token.token), 'the token is never logged');
  });

  it('a personal token neither signs in nor creates tokens, and a session id does not sign in: nothing outlives the token', async () => {
    const token = (await post('/api/account/tokens', { name: 'script', expires_in_days: 1 }, bob)).json() as { token: string; id: string };
    const signIn = await post('/api/session', { token: token.token }, {});
    assert.deepEqual([signIn.status, (signIn.json() as { code: string }).code, signIn.headers['set-cookie']], [403, 'credential_not_allowed', undefined]);
    const mint = await post('/api/account/tokens', { name: 'forever' }, { authorization: `Bearer ${token.token}` });
    assert.deepEqual([mint.status, (mint.json() as { code: string }).code], [403, 'credential_not_allowed']);
    const session = String((await post('/api/session', { token: 'token-bob' }, {})).headers['set-cookie']?.[0]).split(';')[0]!;
    const again = await post('/api/session', { token: session.slice(session.indexOf('=') + 1) }, {});
    assert.deepEqual([again.status, again.headers['set-cookie']], [403, undefined]);
    // A session may create tokens (the console's Tokens page does).
    assert.equal((await post('/api/account/tokens', { name: 'from the console' }, { cookie: session })).status, 201);
    await service.ask({ method: 'DELETE', path: `/api/account/tokens/${token.id}`, headers: bob });
  });

  it('refuses a token without a name, with a bad expiry, or a bad id, with 422', async () => {
    for (const body of [{}, { name: '' }, { name: 'x', expires_in_days: 0 }, { name: 'x', expires_in_days: 1.5 }, { name: 'x', expires_in_days: '7' }]) {
      const res = await post('/api/account/tokens', body, bob);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
    assert.equal((await service.ask({ method: 'DELETE', path: '/api/account/tokens/not-an-id', headers: bob })).status, 422);
    assert.equal((await service.ask({ path: '/api/account/tokens' })).status, 401);
  });

  it('a member gets 403 not_admin on every admin route', async () => {
    const answers = [
      await service.ask({ path: '/api/admin/users', headers: bob }),
      // A bad query or body is no clue to a member: 403 all the same.
      await service.ask({ path: '/api/admin/users?limit=0', headers: bob }),
      await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{}', headers: bob }),
      await post('/api/admin/invites', { email: 'not an email' }, bob),
      await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{"active":false}', headers: bob }),
      await post('/api/admin/invites', { email: 'eve@example.com' }, bob),
    ];
    for (const res of answers) {
      assert.equal(res.status, 403, res.text);
      assert.equal((res.json() as { code: string }).code, 'not_admin');
    }
  });

  it('an admin lists users, deactivates one (their sessions and tokens stop at once, their threads stay readable by members) and reactivates them', async () => {
    const users = (await service.ask({ path: '/api/admin/users?limit=1', headers: alice })).json() as { items: { id: string; role: string; active: boolean }[]; next: string | null };
    assert.deepEqual(users.items.map((u) => [u.id, u.role, u.active]), [['alice', 'admin', true]]);
    assert.equal(users.next, 'alice');
    const rest = (await service.ask({ path: '/api/admin/users?after=alice', headers: alice })).json() as { items: { id: string }[]; next: string | null };
    assert.deepEqual(rest.items.map((u) => u.id), ['bob']);

    const signedIn = await post('/api/session', { token: 'token-bob' }, {});
    const session = String(signedIn.headers['set-cookie']?.[0]).split(';')[0]!;
    const token = (await post('/api/account/tokens', { name: 'script' }, bob)).json() as { token: string };
    const threads = (await service.ask({ path: '/api/console/threads', headers: bob })).json() as { items: { id: string; owner: string }[] };
    const shared = threads.items.find((t) => t.owner === 'bob')!;

    const sockets = [
      (await connectLive(service.port, { thread: shared.id }, { cookie: session })) as LiveClient,
      (await connectLive(service.port, { thread: shared.id }, { authorization: `Bearer ${token.token}` })) as LiveClient,
    ];
    const off = await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', body: '{"active":false}', headers: alice });
    assert.equal(off.status, 200, off.text);
    assert.equal((off.json() as { active: boolean }).active, false);
    for (const headers of [bob, { cookie: session }, { authorization: `Bearer ${token.token}` }]) {
      assert.equal((await service.ask({ path: '/api/session', headers })).status, 401, JSON.stringify(headers));
    }
    // bob's own thread that alice is a member of stays readable by her.
    const byAlice = (await service.ask({ path: '/api/console/threads', headers: alice })).json() as { items: { id: string; owner: string }[] };
    const aliceSees = byAlice.items.filter((t) => t.owner === 'bob').map((t) => t.id);
    assert.ok(aliceSees.length > 0, 'a thread of bob that alice is a member of');
    assert.equal((await service.ask({ path: `/api/console/threads/${aliceSees[0]}`, headers: alice })).status, 200);
    assert.ok(shared !== undefined);

    const on = await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', body: '{"active":true}', headers: alice });
    assert.deepEqual(await Promise.all(sockets.map((s) => s.closed)), [1008, 1008], 'their live sockets closed at the deactivation');
    assert.equal((on.json() as { active: boolean }).active, true);
    assert.equal((await service.ask({ path: '/api/session', headers: bob })).status, 200, 'the world token works again');
    assert.equal((await service.ask({ path: '/api/session', headers: { cookie: session } })).status, 401, 'the sessions ended stay ended');
    assert.equal((await service.ask({ path: '/api/session', headers: { authorization: `Bearer ${token.token}` } })).status, 401, 'the tokens revoked stay revoked');
  });

  it('an admin cannot leave no active admin, changes roles, and gets clear 4xx for bad changes', async () => {
    const demote = await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{"role":"member"}', headers: alice });
    assert.equal(demote.status, 409);
    assert.equal((demote.json() as { code: string }).code, 'last_admin');
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{"active":false}', headers: alice })).status, 409);
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/nobody', body: '{"active":false}', headers: alice })).status, 404);
    // Text storage cannot keep (a NUL) is refused, never a 500.
    assert.equal((await service.ask({ path: '/api/admin/users?after=%00', headers: alice })).status, 422);
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/a%00b', body: '{"active":false}', headers: alice })).status, 422);
    for (const body of ['{}', '{"role":"owner"}', '{"active":"no"}', '{"active":true,"extra":1}']) {
      assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', body, headers: alice })).status, 422, body);
    }
    const promoted = await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', body: '{"role":"admin"}', headers: alice });
    assert.equal((promoted.json() as { role: string }).role, 'admin');
    assert.equal(((await service.ask({ path: '/api/session', headers: bob })).json() as { role: string }).role, 'admin');
    // Now alice may step down: bob is an admin.
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{"role":"member"}', headers: alice })).status, 200);
    assert.equal((await service.ask({ path: '/api/admin/users', headers: alice })).status, 403, 'a demotion takes effect at once');
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/alice', body: '{"role":"admin"}', headers: bob })).status, 200);
  });

  it('invites an email once (normalised), and refuses what is not one', async () => {
    const first = await post('/api/admin/invites', { email: ' Eve@Example.COM ' }, alice);
    assert.equal(first.status, 201, first.text);
    assert.equal((first.json() as { email: string }).email, 'eve@example.com');
    const again = await post('/api/admin/invites', { email: 'eve@example.com' }, alice);
    assert.deepEqual(again.json(), first.json());
    for (const email of ['eve', 'eve@', '@example.com', 'a b@example.com', 42, 'e\u0000ve@example.com']) {
      assert.equal((await post('/api/admin/invites', { email }, alice)).status, 422, String(email));
    }
  });

  it('a live socket opened with a session closes (1008) when the session is signed out; one opened with a token of the same user stays', async () => {
    const signedIn = await post('/api/session', { token: 'token-bob' }, {});
    const session = String(signedIn.headers['set-cookie']?.[0]).split(';')[0]!;
    const threads = (await service.ask({ path: '/api/console/threads', headers: bob })).json() as { items: { id: string }[] };
    const thread = threads.items[0]!.id;
    const bySession = (await connectLive(service.port, { thread }, { cookie: session })) as LiveClient;
    const byToken = (await connectLive(service.port, { thread }, bob)) as LiveClient;
    assert.ok('closed' in bySession && 'closed' in byToken);
    assert.equal((await service.ask({ method: 'DELETE', path: '/api/session', headers: { cookie: session } })).status, 204);
    assert.equal(await bySession.closed, 1008);
    const still = await Promise.race([byToken.closed, new Promise((done) => setTimeout(() => done('open'), 300))]);
    assert.equal(still, 'open', 'the token socket stays');
    byToken.close();
  });

  it('the write guard covers the new routes', async () => {
    const cross = { ...alice, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site', host: `localhost:${service.port}` };
    assert.equal((await post('/api/account/tokens', { name: 'x' }, cross)).status, 403);
    assert.equal((await post('/api/admin/invites', { email: 'mallory@example.com' }, cross)).status, 403);
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', body: '{"active":false}', headers: cross })).status, 403);
  });

  it('ALLOWED_HOSTS holds for the new routes: another Host is 421 before anything runs', async () => {
    for (const path of ['/api/account/tokens', '/api/admin/users', '/api/session/oidc', '/api/session/oidc/callback?code=x&state=y']) {
      const res = await service.ask({ path, headers: { ...alice, host: 'rebound.example.com' } });
      assert.equal(res.status, 421, path);
    }
  });

  it('without an identity provider, the sign-in routes answer 404 sign_in_not_configured', async () => {
    for (const path of ['/api/session/oidc', '/api/session/oidc/callback?code=x&state=y']) {
      const res = await service.ask({ path });
      assert.equal(res.status, 404);
      assert.equal((res.json() as { code: string }).code, 'sign_in_not_configured');
    }
  });
});
