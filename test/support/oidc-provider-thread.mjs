// A real OpenID Connect provider (oidc-provider 9) in a worker thread of the test process, driven by
// test/support/oidc-provider.ts. A thread of its own so it has a clock of its own: oidc-provider reads the
// time from Date.now() and takes no clock option, and moving Date.now() here moves the provider's time
// (its tokens' iat and exp) and nothing of the test's or of the client library's.
//
// workerData: { port, accounts: [{ sub, email, email_verified, name }], clients: [{ client_id, client_secret, redirect_uris }], idTokenTtlSeconds, conformIdTokenClaims }
// Messages in: { id, type: 'clock', offsetSeconds } | { id, type: 'close' }; each answered with { id }.
// Posts { type: 'listening' } once it listens, or { type: 'failed', message }.
import { createServer } from 'node:http';
import { parentPort, workerData } from 'node:worker_threads';
import Provider from 'oidc-provider';

let offsetMs = 0;
const realNow = Date.now;
Date.now = () => realNow() + offsetMs;

const { port, accounts, clients, idTokenTtlSeconds, conformIdTokenClaims } = workerData;
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  clients: clients.map((client) => ({
    ...client,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  // PKCE for every client, whatever its authentication (by default only public clients must use it).
  pkce: { required: () => true },
  async findAccount(_ctx, id) {
    const account = accounts.find((candidate) => candidate.sub === id);
    return account === undefined ? undefined : { accountId: id, claims: () => ({ ...account }) };
  },
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
  // The scope's claims in the ID token itself, as most providers do for the code flow (the library's
  // default keeps them for the userinfo endpoint only).
  // false: email and name in the ID token (as Google and Keycloak do); true: only at the userinfo endpoint.
  conformIdTokenClaims: conformIdTokenClaims === true,
  ttl: { IdToken: idTokenTtlSeconds, AccessToken: 600, AuthorizationCode: 60, Interaction: 600, Session: 600, Grant: 600 },
  cookies: { keys: ['test-only-cookie-key'] },
  features: { devInteractions: { enabled: true } },
});
// Its errors are what the tests look at in the answers; they need not reach the console.
provider.on('server_error', () => {});

const server = createServer(provider.callback());
server.on('error', (error) => parentPort.postMessage({ type: 'failed', message: error.message }));
server.listen(port, '127.0.0.1', () => parentPort.postMessage({ type: 'listening' }));

parentPort.on('message', (message) => {
  if (message.type === 'clock') {
    offsetMs = message.offsetSeconds * 1000;
    parentPort.postMessage({ id: message.id });
  } else if (message.type === 'close') {
    server.closeAllConnections();
    server.close(() => {
      parentPort.postMessage({ id: message.id });
      parentPort.close();
    });
  }
});
