// The account use cases (core/accounts/) over the memory adapter, with a fake identity provider and a clock
// moved by hand: a sign-in's flow is taken once and lapses after 10 minutes, sessions last their TTL, and
// every change of credentials is told so live sockets are checked again.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { memoryAccounts } from '../../adapters/memory/accounts.ts';
import { accessTokens } from '../../core/accounts/access-tokens.ts';
import { administration } from '../../core/accounts/administration.ts';
import { oidcSignIn, SIGN_IN_FLOW_TTL_MS } from '../../core/accounts/oidc-sign-in.ts';
import { sessionKeeper } from '../../core/accounts/sessions.ts';
import type { OidcIdentity } from '../../domain/accounts.ts';
import { IdentityProviderError, type IdentityProvider } from '../../ports/identity-provider.ts';
import { manualClock } from '../support/manual-clock.ts';

const ADA: OidcIdentity = { issuer: 'https://id.example.com', subject: 'ada', email: 'ada@example.com', email_verified: true, name: 'Ada' };

function setUp(answer: () => Promise<OidcIdentity> = async () => ADA) {
  const clock = manualClock();
  const accounts = memoryAccounts(new Map(), { sessions: new Map(), tokens: new Map(), flows: new Map(), invites: new Map() });
  let n = 0;
  const secrets = { newSecret: () => `secret-${++n}-${'x'.repeat(30)}`, hash: (s: string) => createHash('sha256').update(s).digest('hex') };
  const changed: string[] = [];
  const finished: unknown[] = [];
  const provider: IdentityProvider = {
    issuer: ADA.issuer,
    start: async (redirectUri) => ({ url: `https://id.example.com/auth?redirect_uri=${redirectUri}`, state: `state-${n}`, nonce: `nonce-${n}`, code_verifier: `verifier-${n}` }),
    finish: async (_url, expected) => {
      finished.push(expected);
      return answer();
    },
  };
  const sessions = sessionKeeper({ accounts, clock, secrets, ttlMs: 3_600_000, changed: (u) => changed.push(u) });
  const signIn = oidcSignIn({ accounts, provider, sessions, secrets, clock, newId: () => `user-${++n}`, policy: { allowedDomains: ['example.com'], firstAdmin: null } });
  const now = () => new Date(clock.now()).toISOString();
  return { clock, accounts, secrets, sessions, signIn, changed, finished, now };
}

const CALLBACK = new URL('https://console.example.com/api/session/oidc/callback?code=c&state=s');

describe('sign-in with an identity provider (core)', () => {
  it('a flow is kept under its cookie\'s hash only, handed to the provider as started, and taken once', async () => {
    const t = setUp();
    const begun = await t.signIn.begin('https://console.example.com/api/session/oidc/callback');
    assert.equal(begun.max_age_seconds, SIGN_IN_FLOW_TTL_MS / 1000);
    const outcome = await t.signIn.finish(CALLBACK, begun.flow);
    assert.ok(outcome.ok);
    assert.deepEqual(t.finished, [{
      hash: t.secrets.hash(begun.flow), state: 'state-0', nonce: 'nonce-0', code_verifier: 'verifier-0',
      redirect_uri: 'https://console.example.com/api/session/oidc/callback', expires_at: new Date(t.clock.now() + SIGN_IN_FLOW_TTL_MS).toISOString(),
    }]);
    assert.deepEqual(await t.signIn.finish(CALLBACK, begun.flow), { ok: false, reason: 'no_sign_in' }, 'a replay finds no flow');
    assert.deepEqual(await t.signIn.finish(CALLBACK, null), { ok: false, reason: 'no_sign_in' });
    assert.equal(t.finished.length, 1, 'the provider is not asked without a flow');
  });

  it('a flow lapses after 10 minutes; a session after its TTL', async () => {
    const t = setUp();
    const late = await t.signIn.begin('https://c/cb');
    await t.clock.advance(SIGN_IN_FLOW_TTL_MS);
    assert.deepEqual(await t.signIn.finish(CALLBACK, late.flow), { ok: false, reason: 'no_sign_in' });
    const begun = await t.signIn.begin('https://c/cb');
    const outcome = await t.signIn.finish(CALLBACK, begun.flow);
    assert.ok(outcome.ok);
    const hash = t.secrets.hash(outcome.session.secret);
    assert.equal((await t.accounts.userByCredential(hash, t.now()))?.id, outcome.account.id);
    await t.clock.advance(3_600_000 - 1);
    assert.notEqual(await t.accounts.userByCredential(hash, t.now()), null);
    await t.clock.advance(1);
    assert.equal(await t.accounts.userByCredential(hash, t.now()), null, 'expired');
  });

  it('the provider\'s refusal is the outcome, with no session; a bug is not swallowed', async () => {
    const refused = setUp(async () => { throw new IdentityProviderError('token_invalid', 'expired'); });
    const begun = await refused.signIn.begin('https://c/cb');
    assert.deepEqual(await refused.signIn.finish(CALLBACK, begun.flow), { ok: false, reason: 'token_invalid', detail: 'expired' });
    const broken = setUp(async () => { throw new TypeError('a bug'); });
    const again = await broken.signIn.begin('https://c/cb');
    await assert.rejects(broken.signIn.finish(CALLBACK, again.flow), TypeError);
  });

  it('someone not allowed to join gets no account and no session', async () => {
    const t = setUp(async () => ({ ...ADA, subject: 'eve', email: 'eve@elsewhere.org' }));
    const begun = await t.signIn.begin('https://c/cb');
    assert.deepEqual(await t.signIn.finish(CALLBACK, begun.flow), { ok: false, reason: 'not_invited' });
    assert.deepEqual((await t.accounts.listAccounts({ limit: 10, after: null })).items, []);
  });

  it('signing out, revoking a token and deactivating each tell whose credentials changed', async () => {
    const t = setUp();
    const begun = await t.signIn.begin('https://c/cb');
    const outcome = await t.signIn.finish(CALLBACK, begun.flow);
    assert.ok(outcome.ok);
    const user = outcome.account.id;
    await t.sessions.end(outcome.session.secret);
    await t.sessions.end('a-secret-that-names-no-one');
    const tokens = accessTokens({ accounts: t.accounts, clock: t.clock, secrets: t.secrets, newId: () => '0190f3a0-0000-7000-8000-00000000000a', changed: (u) => t.changed.push(u) });
    const token = await tokens.create(user, 'ci', null);
    assert.ok(typeof token === 'object' && token.token.startsWith('cpat_'));
    assert.equal(await tokens.revoke(user, token.id), true);
    assert.equal(await tokens.revoke(user, token.id), false);
    const admin = administration({ accounts: t.accounts, clock: t.clock, changed: (u) => t.changed.push(u) });
    assert.deepEqual(await admin.change(user, user, { active: false }), { ok: false, reason: 'forbidden' }, 'a member is no admin');
    assert.deepEqual(t.changed, [user, user]);
  });
});
