import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startFixtureService, type TestService } from '../support/service.ts';

describe('/api/session', () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService();
  });
  after(() => service.close());

  it('POST with a valid token starts a server-side session: the HttpOnly cookie holds its random id, never the token', async () => {
    const res = await service.ask({ method: 'POST', path: '/api/session', headers: { 'content-type': 'application/json' }, body: '{"token":"token-alice"}' });
    assert.equal(res.status, 204);
    const cookie = res.headers['set-cookie']?.[0] ?? '';
    assert.match(cookie, /^console_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=604800$/);
    assert.ok(!cookie.includes('token-alice'));
    assert.equal(res.text, '');
    const again = await service.ask({ method: 'POST', path: '/api/session', body: '{"token":"token-alice"}' });
    assert.notEqual(again.headers['set-cookie']?.[0], cookie, 'each sign-in is a session of its own');
    const session = cookie.slice(0, cookie.indexOf(';'));
    assert.deepEqual((await service.ask({ path: '/api/session', headers: { cookie: session } })).json(), { id: 'alice', name: 'Alice', role: 'admin' });
  });

  it('DELETE ends the session at once: its cookie names no one after, while another session of the same user goes on', async () => {
    const sessionOf = async () => {
      const res = await service.ask({ method: 'POST', path: '/api/session', body: '{"token":"token-alice"}' });
      const cookie = res.headers['set-cookie']?.[0] ?? '';
      return cookie.slice(0, cookie.indexOf(';'));
    };
    const [ended, other] = [await sessionOf(), await sessionOf()];
    const out = await service.ask({ method: 'DELETE', path: '/api/session', headers: { cookie: ended } });
    assert.equal(out.status, 204);
    assert.equal((await service.ask({ path: '/api/session', headers: { cookie: ended } })).status, 401);
    assert.equal((await service.ask({ path: '/api/session', headers: { cookie: other } })).status, 200);
  });

  it('marks the cookie Secure on https (behind a trusted proxy)', async () => {
    const proxied = await startFixtureService({ TRUST_PROXY: 'true' });
    try {
      const res = await proxied.ask({ method: 'POST', path: '/api/session', headers: { 'x-forwarded-proto': 'https' }, body: '{"token":"token-alice"}' });
      assert.match(String(res.headers['set-cookie']), /; Max-Age=\d+; Secure$/);
    } finally {
      await proxied.close();
    }
  });

  it('POST with an unknown token is 401 and sets nothing; a bad body is 422', async () => {
    const res = await service.ask({ method: 'POST', path: '/api/session', body: '{"token":"token-nobody"}' });
    assert.equal(res.status, 401);
    assert.equal(res.headers['set-cookie'], undefined);
    assert.equal((await service.ask({ method: 'POST', path: '/api/session', body: '{"token":"a b"}' })).status, 422);
    assert.equal((await service.ask({ method: 'POST', path: '/api/session', body: '{}' })).status, 422);
    assert.equal((await service.ask({ method: 'POST', path: '/api/session', body: '{"token":' })).status, 400);
  });

  it('GET answers the caller by cookie or by bearer token', async () => {
    const byCookie = await service.ask({ path: '/api/session', headers: { cookie: 'theme=dark; console_session=token-alice' } });
    assert.equal(byCookie.status, 200);
    assert.deepEqual(byCookie.json(), { id: 'alice', name: 'Alice', role: 'admin' });
    const byBearer = await service.ask({ path: '/api/session', headers: { authorization: 'Bearer token-bob' } });
    assert.deepEqual(byBearer.json(), { id: 'bob', name: 'Bob', role: 'member' });
  });

  it('GET without a valid credential is 401 with WWW-Authenticate: Bearer', async () => {
    for (const headers of <Record<string, string>[]>[{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic dG9rZW4tYWxpY2U=' }, { cookie: 'console_session=nope' }]) {
      const res = await service.ask({ path: '/api/session', headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      assert.equal(res.headers['www-authenticate'], 'Bearer');
      assert.equal(res.headers['content-type'], 'application/problem+json');
    }
  });

  it('DELETE clears the cookie', async () => {
    const res = await service.ask({ method: 'DELETE', path: '/api/session' });
    assert.equal(res.status, 204);
    assert.match(String(res.headers['set-cookie']), /^console_session=; Path=\/; HttpOnly; SameSite=Lax; Max-Age=0/);
  });

  it('the write guard protects sign-in from a cross-site form', async () => {
    const res = await service.ask({
      method: 'POST', path: '/api/session', body: '{"token":"token-alice"}',
      headers: { host: `localhost:${service.port}`, origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    assert.equal(res.status, 403);
    assert.equal(res.headers['set-cookie'], undefined);
  });

  it('never logs a token', () => {
    const all = JSON.stringify(service.logs);
    for (const secret of ['token-alice', 'token-bob']) assert.ok(!all.includes(secret), secret);
  });
});
