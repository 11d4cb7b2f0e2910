import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { isLoopbackIssuer, openIdIdentityProvider } from '../../adapters/openid-client/identity-provider.ts';
import { IdentityProviderError, type CallbackRefusal, type IdentityProvider } from '../../ports/identity-provider.ts';
import { freePort } from '../support/free-port.ts';
import { decline, signIn, startOidcProvider, type TestAccount, type TestProvider } from '../support/oidc-provider.ts';

// The service's callback: nothing listens there; the provider's redirect to it is read, not followed.
const REDIRECT_URI = 'http://127.0.0.1:9/auth/callback';
const ADA: TestAccount = { sub: 'ada-7f3a', email: 'ada@example.com', email_verified: true, name: 'Ada Lovelace' };
const BOB: TestAccount = { sub: 'bob-91c2', email: 'bob@example.org', email_verified: false, name: 'Bob Brown' };
const SERVICE = { client_id: 'console', client_secret: 'secret-of-the-console-3b9d1e', redirect_uris: [REDIRECT_URI] };
const OTHER = { client_id: 'another-audience', client_secret: 'secret-of-another-c71f02', redirect_uris: [REDIRECT_URI] };

function adapter(issuer: string, client = SERVICE): IdentityProvider {
  return openIdIdentityProvider({ issuer, clientId: client.client_id, clientSecret: client.client_secret, timeoutMs: 5_000 });
}

/** Starts a sign-in and walks it through the provider's pages as `account`: what `finish` gets. */
async function signedIn(idp: IdentityProvider, account: TestAccount) {
  const started = await idp.start(REDIRECT_URI);
  const callback = await signIn(started.url, REDIRECT_URI, account.sub);
  return { started, callback, expected: { state: started.state, nonce: started.nonce, code_verifier: started.code_verifier, redirect_uri: REDIRECT_URI } };
}

/** The refusal `work` ends with, checked to be an IdentityProviderError with no credential in it. */
async function refusalOf(work: Promise<unknown>): Promise<CallbackRefusal> {
  const error = await work.then(
    () => assert.fail('expected a refusal'),
    (caught: unknown) => caught,
  );
  assert.ok(error instanceof IdentityProviderError, `not an IdentityProviderError: ${inspect(error)}`);
  const shown = inspect(error, { depth: null }) + JSON.stringify(error) + String(error.stack);
  for (const secret of [SERVICE.client_secret, OTHER.client_secret]) assert.ok(!shown.includes(secret), `the client secret is in ${shown}`);
  return error.reason;
}

describe('the openid-client identity provider against a real provider', () => {
  let provider: TestProvider;
  let idp: IdentityProvider;

  before(async () => {
    provider = await startOidcProvider({ accounts: [ADA, BOB], clients: [SERVICE, OTHER] });
    idp = adapter(provider.issuer);
  });
  after(() => provider.close());

  it('a full sign-in answers who signed in, from the ID token', async () => {
    for (const account of [ADA, BOB]) {
      const { callback, expected } = await signedIn(idp, account);
      const identity = await idp.finish(callback, expected);
      assert.deepEqual(identity, { issuer: provider.issuer, subject: account.sub, email: account.email, email_verified: account.email_verified, name: account.name });
    }
    assert.equal(idp.issuer, provider.issuer);
  });

  it('the authorization URL carries an S256 code challenge, state, nonce, the scope and the client', async () => {
    const started = await idp.start(REDIRECT_URI);
    const url = new URL(started.url);
    assert.equal(url.origin, provider.issuer);
    const query = url.searchParams;
    assert.equal(query.get('response_type'), 'code');
    assert.equal(query.get('client_id'), SERVICE.client_id);
    assert.equal(query.get('redirect_uri'), REDIRECT_URI);
    assert.deepEqual(query.get('scope')?.split(' ').sort(), ['email', 'openid', 'profile']);
    assert.equal(query.get('code_challenge_method'), 'S256');
    const challenge = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(started.code_verifier));
    assert.equal(query.get('code_challenge'), Buffer.from(challenge).toString('base64url'));
    assert.equal(query.get('state'), started.state);
    assert.equal(query.get('nonce'), started.nonce);
    const again = await idp.start(REDIRECT_URI);
    assert.notEqual(again.state, started.state);
    assert.notEqual(again.nonce, started.nonce);
    assert.notEqual(again.code_verifier, started.code_verifier);
  });

  it('a callback whose state is not the sign-in\'s is refused: state_mismatch', async () => {
    const { callback, expected } = await signedIn(idp, ADA);
    const other = await idp.start(REDIRECT_URI);
    assert.equal(await refusalOf(idp.finish(callback, { ...expected, state: other.state })), 'state_mismatch');
    const stateless = new URL(callback);
    stateless.searchParams.delete('state');
    assert.equal(await refusalOf(idp.finish(stateless, expected)), 'state_mismatch');
  });

  it('a code used twice is refused the second time: code_refused', async () => {
    const { callback, expected } = await signedIn(idp, ADA);
    await idp.finish(callback, expected);
    assert.equal(await refusalOf(idp.finish(callback, expected)), 'code_refused');
  });

  it('a code redeemed with another PKCE verifier is refused: code_refused', async () => {
    const { callback, expected } = await signedIn(idp, ADA);
    const other = await idp.start(REDIRECT_URI);
    assert.equal(await refusalOf(idp.finish(callback, { ...expected, code_verifier: other.code_verifier })), 'code_refused');
  });

  it('a nonce that is not the sign-in\'s is refused: token_invalid', async () => {
    const { callback, expected } = await signedIn(idp, ADA);
    const other = await idp.start(REDIRECT_URI);
    assert.equal(await refusalOf(idp.finish(callback, { ...expected, nonce: other.nonce })), 'token_invalid');
  });

  it('a person who cancels at the provider: provider_error', async () => {
    const started = await idp.start(REDIRECT_URI);
    const callback = await decline(started.url, REDIRECT_URI);
    assert.equal(callback.searchParams.get('error'), 'access_denied');
    const expected = { state: started.state, nonce: started.nonce, code_verifier: started.code_verifier, redirect_uri: REDIRECT_URI };
    assert.equal(await refusalOf(idp.finish(callback, expected)), 'provider_error');
  });

  it('an error callback with another sign-in\'s state is a state_mismatch, not the provider\'s error', async () => {
    const started = await idp.start(REDIRECT_URI);
    const forged = new URL(`${REDIRECT_URI}?error=access_denied&state=${started.state}x&iss=${encodeURIComponent(provider.issuer)}`);
    const expected = { state: started.state, nonce: started.nonce, code_verifier: started.code_verifier, redirect_uri: REDIRECT_URI };
    assert.equal(await refusalOf(idp.finish(forged, expected)), 'state_mismatch');
  });

  it('a code the provider issued to another client is refused: code_refused', async () => {
    const otherIdp = adapter(provider.issuer, OTHER);
    const { callback, expected } = await signedIn(otherIdp, ADA);
    assert.equal(await refusalOf(idp.finish(callback, expected)), 'code_refused');
  });

  it('an ID token that expired before the service read it: token_invalid', async () => {
    // The provider's clock an hour behind: it signs an ID token that lasts 10 minutes from its now, so
    // its exp is 50 minutes in the past for the service (well beyond the library's 30 s tolerance).
    await provider.setClockOffset(-3600);
    try {
      const { callback, expected } = await signedIn(idp, ADA);
      assert.equal(await refusalOf(idp.finish(callback, expected)), 'token_invalid');
    } finally {
      await provider.setClockOffset(0);
    }
    // The same flow with the clocks agreeing signs in: what was refused was the expiry.
    const { callback, expected } = await signedIn(idp, ADA);
    assert.equal((await idp.finish(callback, expected)).subject, ADA.sub);
  });
});

describe('the issuer the adapter is configured with', () => {
  let provider: TestProvider;
  before(async () => {
    provider = await startOidcProvider({ accounts: [ADA], clients: [SERVICE] });
  });
  after(() => provider.close());

  it('must be the issuer the provider names, exactly: another spelling of its URL is refused at discovery', async () => {
    for (const spelling of [`${provider.issuer}/`, `http://localhost:${provider.port}`]) {
      const misnamed = adapter(spelling);
      const error = await misnamed.start(REDIRECT_URI).then(
        () => assert.fail(`${spelling} was accepted`),
        (caught: unknown) => caught,
      );
      assert.ok(error instanceof IdentityProviderError);
      assert.equal(error.reason, 'provider_unavailable');
      assert.match(error.message, /names its issuer/);
      assert.ok(error.message.includes(provider.issuer), error.message);
    }
  });

  it('a callback from another provider (its iss parameter) is refused: token_invalid', async () => {
    const idp = adapter(provider.issuer);
    const { callback, expected } = await signedIn(idp, ADA);
    const mixedUp = new URL(callback);
    assert.equal(mixedUp.searchParams.get('iss'), provider.issuer);
    mixedUp.searchParams.set('iss', `http://127.0.0.1:${provider.port + 1}`);
    assert.equal(await refusalOf(idp.finish(mixedUp, expected)), 'token_invalid');
  });

  it('plain http is refused off the loopback; https anywhere and http on the loopback are accepted', () => {
    for (const issuer of ['http://idp.example.com', 'http://10.0.0.5:8080', 'http://127.0.0.1.example.com', 'http://localhost.example.com', 'not a url']) {
      assert.throws(() => openIdIdentityProvider({ issuer, clientId: 'c', clientSecret: 's' }), /issuer/, issuer);
      assert.equal(isLoopbackIssuer(issuer), false, issuer);
    }
    assert.throws(() => openIdIdentityProvider({ issuer: 'ftp://127.0.0.1', clientId: 'c', clientSecret: 's' }), /issuer must be https/);
    for (const issuer of ['http://127.0.0.1:8080', 'http://[::1]:8080/realm', 'http://localhost']) {
      assert.equal(isLoopbackIssuer(issuer), true, issuer);
      assert.equal(openIdIdentityProvider({ issuer, clientId: 'c', clientSecret: 's' }).issuer, issuer);
    }
    assert.equal(openIdIdentityProvider({ issuer: 'https://idp.example.com', clientId: 'c', clientSecret: 's' }).issuer, 'https://idp.example.com');
  });
});

describe('a provider that is down', () => {
  it('the adapter is made while it is down, answers provider_unavailable, and works once it is up', async () => {
    const port = await freePort();
    const issuer = `http://127.0.0.1:${port}`;
    const idp = adapter(issuer);
    assert.equal(await refusalOf(idp.start(REDIRECT_URI)), 'provider_unavailable');
    assert.equal(await refusalOf(idp.start(REDIRECT_URI)), 'provider_unavailable');

    const provider = await startOidcProvider({ accounts: [ADA], clients: [SERVICE], port });
    try {
      const { callback, expected } = await signedIn(idp, ADA);
      // Down again between the callback and the token request: the code cannot be redeemed.
      await provider.close();
      assert.equal(await refusalOf(idp.finish(callback, expected)), 'provider_unavailable');
    } finally {
      await provider.close();
    }

    const again = await startOidcProvider({ accounts: [ADA], clients: [SERVICE], port });
    try {
      const { callback, expected } = await signedIn(idp, ADA);
      assert.equal((await idp.finish(callback, expected)).subject, ADA.sub);
    } finally {
      await again.close();
    }
  });
});

describe('a provider that keeps email and name out of the ID token', () => {
  it('the identity is read from its userinfo endpoint, for the same subject', async () => {
    const strict = await startOidcProvider({ accounts: [ADA, BOB], clients: [SERVICE], claimsAtUserinfoOnly: true });
    try {
      const idp = adapter(strict.issuer);
      for (const account of [ADA, BOB]) {
        const { callback, expected } = await signedIn(idp, account);
        assert.deepEqual(await idp.finish(callback, expected), { issuer: strict.issuer, subject: account.sub, email: account.email, email_verified: account.email_verified, name: account.name });
      }
    } finally {
      await strict.close();
    }
  });
});
