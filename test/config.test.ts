import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { serviceEntry } from './support/built.ts';

describe('configuration', () => {
  it('has the contract defaults', () => {
    const loaded = loadConfig({});
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.value, {
      host: '127.0.0.1',
      port: 8080,
      storage: 'embedded',
      databaseUrl: null,
      databasePreparedStatements: 'named',
      dataDir: './.data',
      world: null,
      demo: true,
      demoXmpp: null,
      demoSlack: null,
      maxConnections: 1024,
      maxConnectionsPerClient: 64,
      sandboxOrigin: 'http://sandbox.localhost:8080',
      viewerOrigin: 'http://localhost:8080',
      viewerPath: '/artifacts',
      mcpTimeoutMs: 10000,
      trustProxy: false,
      // The loopback names at PORT, then the sandbox origin's host (the viewer origin's is already there).
      allowedHosts: [
        { host: 'localhost', port: 8080 },
        { host: '127.0.0.1', port: 8080 },
        { host: '[::1]', port: 8080 },
        { host: 'sandbox.localhost', port: 8080 },
      ],
      // No host may take a webhook over http:, or at a loopback, private or link-local address.
      webhookAllowedHosts: [],
      logLevel: 'info',
      turnLeaseMs: 30000,
      chatClaimMs: 10000,
      worktreeRetentionDays: 14,
      agentIdleTimeoutMs: 600000,
      agentSandbox: 'auto',
      metricsToken: null,
      oidc: null,
      sessionTtlHours: 168,
      limits: { signInsPerMinute: 10, directivesPerMinute: 60, liveSocketsPerUser: 32, uiResourceBytes: 5242880 },
    });
    assert.ok(Object.isFrozen(loaded.value));
  });

  it('derives storage from DATABASE_URL and the default origins from PORT', () => {
    const loaded = loadConfig({ DATABASE_URL: 'postgres://u@db:5432/x', PORT: '9000' });
    assert.ok(loaded.ok);
    assert.equal(loaded.value.storage, 'postgres');
    assert.equal(loaded.value.sandboxOrigin, 'http://sandbox.localhost:9000');
  });

  it('serves the demo world only in the embedded and memory modes with no world file named', () => {
    const demo = (env: Record<string, string>) => {
      const loaded = loadConfig(env);
      assert.ok(loaded.ok);
      return loaded.value.demo;
    };
    assert.equal(demo({}), true);
    assert.equal(demo({ CONSOLE_STORAGE: 'memory' }), true);
    assert.equal(demo({ DATABASE_URL: 'postgres://u@db:5432/x' }), false, 'a PostgreSQL server never gets the demo world by default');
    assert.equal(demo({ CONSOLE_WORLD: 'world.json' }), false);
  });

  it('reads empty origins as none, and normalizes the others', () => {
    const loaded = loadConfig({ ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: 'HTTPS://Console.Example.com:443/' });
    assert.ok(loaded.ok);
    assert.equal(loaded.value.sandboxOrigin, null);
    assert.equal(loaded.value.viewerOrigin, 'https://console.example.com');
  });

  it('reads ALLOWED_HOSTS as host[:port] (no port: 80 and 443), in place of the loopback names, beside the origins', () => {
    // A deployment, not the demo (which answers 127.0.0.1 as well: test/demo-allowed-hosts.test.ts).
    const loaded = loadConfig({ CONSOLE_WORLD: 'world.json', ALLOWED_HOSTS: ' Console.Example.com , [::1]:9000', ARTIFACT_SANDBOX_ORIGIN: 'https://sandbox.example.com', ARTIFACT_VIEWER_ORIGIN: 'https://console.example.com' });
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.value.allowedHosts, [
      { host: 'console.example.com', port: 80 },
      { host: '[::1]', port: 9000 },
      { host: 'sandbox.example.com', port: 443 },
      { host: 'console.example.com', port: 443 },
    ]);
    const none = loadConfig({ CONSOLE_WORLD: 'world.json', ALLOWED_HOSTS: '', ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: 'http://console.test:8080' });
    assert.ok(none.ok);
    assert.deepEqual(none.value.allowedHosts, [{ host: 'console.test', port: 8080 }], 'empty: only the origins answer');
  });

  it('reads WEBHOOK_ALLOWED_HOSTS as host names or addresses, lower case, without brackets; empty for none', () => {
    const loaded = loadConfig({ WEBHOOK_ALLOWED_HOSTS: ' Hooks.Internal , localhost,[::1],10.0.0.7,localhost' });
    assert.ok(loaded.ok);
    assert.deepEqual(loaded.value.webhookAllowedHosts, ['hooks.internal', 'localhost', '::1', '10.0.0.7']);
    const none = loadConfig({ WEBHOOK_ALLOWED_HOSTS: '' });
    assert.ok(none.ok);
    assert.deepEqual(none.value.webhookAllowedHosts, []);
  });

  it('caps connections per client strictly below the global cap (a small MAX_CONNECTIONS too), and not at all behind a proxy', () => {
    const perClient = (env: Record<string, string>) => {
      const loaded = loadConfig(env);
      assert.ok(loaded.ok, JSON.stringify(env));
      return loaded.value.maxConnectionsPerClient;
    };
    // Equal to MAX_CONNECTIONS, one client could still take every slot: the default is a quarter of it, at most 64.
    assert.equal(perClient({ MAX_CONNECTIONS: '10' }), 2, 'the default stays below a small MAX_CONNECTIONS');
    assert.equal(perClient({ MAX_CONNECTIONS: '256' }), 64);
    assert.equal(perClient({ MAX_CONNECTIONS: '100000' }), 64);
    assert.equal(perClient({ MAX_CONNECTIONS: '2' }), 1);
    assert.equal(perClient({ MAX_CONNECTIONS: '1' }), 1, 'one connection in all: one client may hold it');
    assert.equal(perClient({ MAX_CONNECTIONS_PER_CLIENT: '1', MAX_CONNECTIONS: '1' }), 1);
    assert.equal(perClient({ MAX_CONNECTIONS_PER_CLIENT: '99', MAX_CONNECTIONS: '100' }), 99);
    assert.equal(perClient({ MAX_CONNECTIONS_PER_CLIENT: '8' }), 8);
    assert.equal(perClient({ TRUST_PROXY: 'true', MAX_CONNECTIONS_PER_CLIENT: '8' }), null, 'every connection is the proxy\'s');
  });

  it('reads sign-in with an identity provider: all three variables or none, an https issuer (http on loopback only)', () => {
    const three = { OIDC_ISSUER: 'https://id.example.com/realms/acme', OIDC_CLIENT_ID: 'console', OIDC_CLIENT_SECRET: 's3cret-value' };
    const loaded = loadConfig({ ...three, OIDC_ALLOWED_DOMAINS: 'Example.com, acme.org', OIDC_FIRST_ADMIN: 'Ops@Example.com', SESSION_TTL_HOURS: '12' });
    assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
    assert.deepEqual(loaded.value.oidc, {
      issuer: 'https://id.example.com/realms/acme', clientId: 'console', clientSecret: 's3cret-value', redirectUrl: null,
      allowedDomains: ['example.com', 'acme.org'], name: 'your identity provider', firstAdmin: 'ops@example.com',
    });
    assert.equal(loaded.value.sessionTtlHours, 12);
    const empty = loadConfig({ OIDC_ISSUER: '', OIDC_CLIENT_ID: '', OIDC_CLIENT_SECRET: '', OIDC_NAME: '' });
    assert.ok(empty.ok && empty.value.oidc === null, 'set empty, as compose passes them, they are unset');
    for (const issuer of ['http://127.0.0.1:4000', 'http://localhost:4000/oidc', 'http://[::1]:4000']) {
      assert.ok(loadConfig({ ...three, OIDC_ISSUER: issuer }).ok, issuer);
    }
    const refusals: [Record<string, string>, string][] = [
      [{ ...three, OIDC_ISSUER: 'http://id.example.com' }, 'OIDC_ISSUER'],
      [{ ...three, OIDC_ISSUER: 'id.example.com' }, 'OIDC_ISSUER'],
      [{ ...three, OIDC_ISSUER: 'https://id.example.com/?x=1' }, 'OIDC_ISSUER'],
      [{ ...three, OIDC_REDIRECT_URL: '/api/session/oidc/callback' }, 'OIDC_REDIRECT_URL'],
      [{ ...three, OIDC_ALLOWED_DOMAINS: 'example.com,not a domain' }, 'OIDC_ALLOWED_DOMAINS'],
      [{ ...three, OIDC_FIRST_ADMIN: 'ops' }, 'OIDC_FIRST_ADMIN'],
      [{ ...three, SESSION_TTL_HOURS: '0' }, 'SESSION_TTL_HOURS'],
      [{ OIDC_ISSUER: three.OIDC_ISSUER, OIDC_CLIENT_ID: 'console' }, 'OIDC_CLIENT_SECRET'],
    ];
    for (const [env, variable] of refusals) {
      const refused = loadConfig(env);
      assert.ok(!refused.ok, JSON.stringify(env));
      assert.deepEqual(refused.error.map((issue) => issue.path), [variable], JSON.stringify(env));
      assert.ok(!JSON.stringify(refused.error).includes('s3cret-value'), 'an issue never shows the secret');
    }
  });

  it('names the variable of every bad value', () => {
    const cases: Record<string, string>[] = [
      { PORT: 'eighty' },
      { PORT: '70000' },
      { CONSOLE_STORAGE: 'sqlite' },
      { DATABASE_URL: 'mysql://x' },
      { DATABASE_PREPARED_STATEMENTS: 'off' },
      { ARTIFACT_SANDBOX_ORIGIN: 'sandbox.localhost:8080' },
      { ARTIFACT_VIEWER_ORIGIN: 'http://a.example/path' },
      { ARTIFACT_VIEWER_PATH: 'artifacts' },
      { ARTIFACT_VIEWER_PATH: '/artifacts/' },
      { MCP_TIMEOUT_MS: '0' },
      { TRUST_PROXY: 'yes' },
      { WORKTREE_RETENTION_DAYS: '-1' },
      { WORKTREE_RETENTION_DAYS: 'a month' },
      { LOG_LEVEL: 'loud' },
      { HOST: '' },
      { MAX_CONNECTIONS: '0' },
      { MAX_CONNECTIONS: 'many' },
      { ALLOWED_HOSTS: 'http://console.example.com' },
      { ALLOWED_HOSTS: 'console.example.com,,localhost' },
      { ALLOWED_HOSTS: 'console.example.com:0' },
      { ALLOWED_HOSTS: '::1' },
      { WEBHOOK_ALLOWED_HOSTS: 'hooks.internal:8080' },
      { WEBHOOK_ALLOWED_HOSTS: 'http://hooks.internal' },
      { MAX_CONNECTIONS_PER_CLIENT: '0' },
      { MAX_CONNECTIONS_PER_CLIENT: '101', MAX_CONNECTIONS: '100' },
      // As many as everyone: one client could lock every other out.
      { MAX_CONNECTIONS_PER_CLIENT: '100', MAX_CONNECTIONS: '100' },
      { MAX_CONNECTIONS_PER_CLIENT: '64', MAX_CONNECTIONS: '64' },
      { MAX_CONNECTIONS_PER_CLIENT: '2', MAX_CONNECTIONS: '1' },
    ];
    for (const env of cases) {
      const loaded = loadConfig(env);
      assert.equal(loaded.ok, false, JSON.stringify(env));
      if (!loaded.ok) assert.deepEqual(loaded.error.map((issue) => issue.path), Object.keys(env).slice(0, 1), JSON.stringify(env));
    }
    const noUrl = loadConfig({ CONSOLE_STORAGE: 'postgres' });
    assert.ok(!noUrl.ok && noUrl.error[0]!.path === 'DATABASE_URL');
  });

  it('npm start exits with status 2 and names the variable', () => {
    const run = spawnSync(process.execPath, [serviceEntry()], {
      env: { ...process.env, PORT: 'eighty' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(run.status, 2);
    assert.match(run.stderr, /PORT/);
  });
});
