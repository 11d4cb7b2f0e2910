import * as v from 'valibot';
import { distinctHosts, loopbackHosts } from '../domain/allowed-hosts.ts';
import { formatOrigin, parseHostHeader, parseOrigin, type HostAndPort } from '../domain/origin.ts';
import { fail, ok, type Issue, type Result } from '../domain/result.ts';
import { SLACK_API_URL_PATTERN, type SlackSettings } from '../domain/slack.ts';
import { EMAIL_PATTERN } from '../domain/accounts.ts';
import { normalHost } from '../domain/webhook-url.ts';
import { parseIpv6 } from '../domain/ip-ranges.ts';
import { BARE_JID_PATTERN, DOMAIN_PATTERN, XMPP_SERVICE_PATTERN, type XmppAccount } from '../domain/xmpp.ts';
import { defaultPerClientCap } from './http/connection-cap.ts';

/** Where state lives: PostgreSQL, PostgreSQL embedded (PGlite), or memory only. */
export type StorageMode = 'postgres' | 'embedded' | 'memory';

/** The service's configuration: read once from the environment at start, frozen, passed down. */
export interface Config {
  readonly host: string;
  readonly port: number;
  readonly storage: StorageMode;
  readonly databaseUrl: string | null;
  /**
   * Whether the hot path's statements are prepared once per PostgreSQL connection by name (`named`, the default) or
   * sent unnamed, parsed and planned each time (`unnamed`: for a pooler in transaction mode that does not keep
   * prepared statements, such as PgBouncer before 1.21 or with max_prepared_statements = 0).
   */
  readonly databasePreparedStatements: 'named' | 'unnamed';
  readonly dataDir: string;
  /** A world file to load at start; null for none named. */
  readonly world: string | null;
  /**
   * Whether the demo world (its published tokens, its bundled MCP provider) is served: only when no
   * world file is named and storage is embedded or memory, never on a PostgreSQL server.
   */
  readonly demo: boolean;
  /**
   * The demo world's XMPP channel (`xmpp-chat`): its server and bot account, from DEMO_XMPP_SERVICE,
   * DEMO_XMPP_JID, DEMO_XMPP_MUC and DEMO_XMPP_NICK, the password left in DEMO_XMPP_PASSWORD (its
   * `password_env`); null unless all three of SERVICE, JID and PASSWORD are set and the demo world is served.
   */
  readonly demoXmpp: XmppAccount | null;
  /**
   * The demo world's Slack channel (`slack-chat`): the variables holding its tokens (DEMO_SLACK_APP_TOKEN,
   * DEMO_SLACK_BOT_TOKEN, named, never read here) and the Web API's URL (DEMO_SLACK_API_URL, null: Slack's
   * own); null unless both tokens are set and the demo world is served.
   */
  readonly demoSlack: SlackSettings | null;
  /** Open connections (upgraded websockets included) past which a new one is answered 503 and closed. */
  readonly maxConnections: number;
  /**
   * Open connections of one client address (an IPv6 one by its /64) past which its new one is
   * answered 429 and closed, so one client cannot take every slot: below `maxConnections` (unless
   * that is 1); null under TRUST_PROXY, where every connection is the proxy's (it owns per-client limits).
   */
  readonly maxConnectionsPerClient: number | null;
  /** The isolated sandbox origin, without a trailing slash; null when none is configured. */
  readonly sandboxOrigin: string | null;
  /** Where artifact viewer pages live; null when none is configured. */
  readonly viewerOrigin: string | null;
  /** The viewer path prefix (`/artifacts`), without a trailing slash. */
  readonly viewerPath: string;
  readonly mcpTimeoutMs: number;
  /** Whether the external scheme is taken from `X-Forwarded-Proto`. */
  readonly trustProxy: boolean;
  /**
   * Every `Host` the service answers (ALLOWED_HOSTS, or the loopback names at PORT, plus the sandbox
   * and viewer origins' hosts, and in demo mode `127.0.0.1` at the port listened on, where the bundled
   * provider is called); any other is refused at the edge. A port of 0 stands for the port listened on.
   */
  readonly allowedHosts: readonly HostAndPort[];
  /**
   * Hosts a webhook may be sent to over `http:`, and whose addresses may be loopback, private or link-local
   * (WEBHOOK_ALLOWED_HOSTS): lower case, without brackets or a port (domain/webhook-url.ts).
   */
  readonly webhookAllowedHosts: readonly string[];
  readonly logLevel: string;
  /** How long a turn's holder may go without renewing its lease before any instance sweeps the turn. */
  readonly turnLeaseMs: number;
  /**
   * How long a chat message's claim holds unless its listener renews it (every third of it, while it handles
   * the message): another instance, or a restart, takes the message of a listener that died after this long.
   */
  readonly chatClaimMs: number;
  /** Days a thread's worktree may go unused before the clean-up removes it (its work committed on its branch first); 0: never. */
  readonly worktreeRetentionDays: number;
  /** How long an agent may send nothing during a turn before the turn is cancelled. */
  readonly agentIdleTimeoutMs: number;
  /** `auto`: agents run in a bubblewrap sandbox where the machine can make one (AGENT_SANDBOX); `off`: never. */
  readonly agentSandbox: 'auto' | 'off';
  /** The bearer token `GET /metrics` answers to; null: no metrics route at all (404). */
  readonly metricsToken: string | null;
  /** Sign-in with an OpenID Connect provider (OIDC_*); null when not configured (tokens only). */
  readonly oidc: OidcConfig | null;
  /** How long a signed-in session lasts (SESSION_TTL_HOURS). */
  readonly sessionTtlHours: number;
  /** The limits each instance applies (docs/operations.md, configuration). */
  readonly limits: {
    /** Failed credentials per minute from one client address, on any path (SIGNIN_ATTEMPTS_PER_MINUTE). */
    readonly signInsPerMinute: number;
    readonly directivesPerMinute: number;
    readonly liveSocketsPerUser: number;
    /** Bytes of one MCP response (the UI resource's read, its list) past which the load is 502. */
    readonly uiResourceBytes: number;
  };
}

/** OpenID Connect sign-in (CONTRACT section 13). The secret is only ever read from the environment. */
export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The callback URL registered at the provider; null: built from the console origin the sign-in started on. */
  readonly redirectUrl: string | null;
  /** Lower-case email domains whose verified users may join on their first sign-in. */
  readonly allowedDomains: readonly string[];
  /** What the sign-in button says: "Sign in with <name>". */
  readonly name: string;
  /** The email made admin on its first sign-in while no admin exists. */
  readonly firstAdmin: string | null;
}

/** Whether a URL's host is this machine's loopback (an `http:` issuer is accepted only there: tests). */
export function isLoopbackUrl(url: URL): boolean {
  return url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
}

/** OIDC_ISSUER: an https URL, or http on a loopback host. */
const issuerUrl = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const url = URL.canParse(dataset.value) ? new URL(dataset.value) : null;
    if (url === null || (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopbackUrl(url))) || url.search !== '' || url.hash !== '' || url.username !== '') {
      addIssue({ message: 'must be an https URL (http only on 127.0.0.1, ::1 or localhost), without a query' });
      return NEVER;
    }
    return dataset.value;
  }),
);

/** OIDC_REDIRECT_URL: an absolute http(s) URL. */
const redirectUrl = v.pipe(
  v.string(),
  v.check((text) => URL.canParse(text) && /^https?:$/.test(new URL(text).protocol), 'must be an absolute http or https URL such as https://console.example.com/api/session/oidc/callback'),
);

/** OIDC_ALLOWED_DOMAINS: comma-separated domains, lower-cased. */
const domainList = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const domains = dataset.value.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== '');
    const bad = domains.find((d) => !DOMAIN_PATTERN.test(d));
    if (bad !== undefined) {
      addIssue({ message: `must be a comma-separated list of email domains such as example.com (${JSON.stringify(bad.slice(0, 100))} is not one)` });
      return NEVER;
    }
    return domains;
  }),
);

const integer = (min: number, max: number) =>
  v.pipe(
    v.string(),
    v.regex(/^[0-9]+$/, 'must be a whole number'),
    v.transform(Number),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  );

/** An origin variable: the empty string means none. */
const origin = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    if (dataset.value === '') return null;
    const parsed = parseOrigin(dataset.value);
    if (parsed === null) {
      addIssue({ message: 'must be an http or https origin such as http://sandbox.localhost:8080, or empty' });
      return NEVER;
    }
    return formatOrigin(parsed);
  }),
);

/** ALLOWED_HOSTS: comma-separated `host[:port]` (no port: 80 and 443); the empty string for none. */
const hostList = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    if (dataset.value.trim() === '') return [];
    const hosts: HostAndPort[] = [];
    for (const entry of dataset.value.split(',')) {
      const parsed = parseHostHeader(entry.trim(), 'http');
      if (parsed === null) {
        addIssue({ message: `must be a comma-separated list of host[:port], such as console.example.com,localhost:8080 (${JSON.stringify(entry.trim().slice(0, 100))} is not one)` });
        return NEVER;
      }
      hosts.push(parsed);
    }
    return hosts;
  }),
);

/** WEBHOOK_ALLOWED_HOSTS: comma-separated host names or addresses, no port (`hooks.internal,localhost,[::1]`); empty for none. */
const webhookHostList = v.pipe(
  v.string(),
  v.rawTransform(({ dataset, addIssue, NEVER }) => {
    const hosts = dataset.value.split(',').map(normalHost).filter((host) => host !== '');
    const bad = hosts.find((host) => !(/^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/.test(host) || (host.includes(':') && parseIpv6(host) !== null)) || host.length > 253);
    if (bad !== undefined) {
      addIssue({ message: `must be a comma-separated list of host names or addresses without a port, such as hooks.internal,localhost (${JSON.stringify(bad.slice(0, 100))} is not one)` });
      return NEVER;
    }
    return [...new Set(hosts)];
  }),
);

const EnvSchema = v.object({
  HOST: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty')), '127.0.0.1'),
  PORT: v.optional(integer(0, 65535), '8080'),
  CONSOLE_STORAGE: v.optional(v.picklist(['postgres', 'embedded', 'memory'], 'must be postgres, embedded or memory')),
  DATABASE_URL: v.optional(
    v.pipe(v.string(), v.regex(/^postgres(ql)?:\/\/\S+$/, 'must be a postgres:// or postgresql:// URL')),
  ),
  DATABASE_PREPARED_STATEMENTS: v.optional(v.picklist(['named', 'unnamed'], 'must be named or unnamed'), 'named'),
  DATA_DIR: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty')), './.data'),
  CONSOLE_WORLD: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'))),
  ARTIFACT_SANDBOX_ORIGIN: v.optional(origin),
  ARTIFACT_VIEWER_ORIGIN: v.optional(origin),
  ARTIFACT_VIEWER_PATH: v.optional(
    v.pipe(v.string(), v.regex(/^(\/[A-Za-z0-9._~-]+)+$/, 'must be a path such as /artifacts, without a trailing slash')),
    '/artifacts',
  ),
  MCP_TIMEOUT_MS: v.optional(integer(1, 600_000), '10000'),
  TRUST_PROXY: v.optional(
    v.pipe(
      v.picklist(['true', 'false', '1', '0'], 'must be true or false'),
      v.transform((value) => value === 'true' || value === '1'),
    ),
    'false',
  ),
  ALLOWED_HOSTS: v.optional(hostList),
  WEBHOOK_ALLOWED_HOSTS: v.optional(webhookHostList, ''),
  LOG_LEVEL: v.optional(
    v.picklist(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], 'must be a pino level or silent'),
    'info',
  ),
  TURN_LEASE_MS: v.optional(integer(1000, 3_600_000), '30000'),
  CHAT_CLAIM_MS: v.optional(integer(1000, 3_600_000), '10000'),
  AGENT_IDLE_TIMEOUT_MS: v.optional(integer(1000, 86_400_000), '600000'),
  AGENT_SANDBOX: v.optional(v.picklist(['auto', 'off'], 'must be auto or off'), 'auto'),
  WORKTREE_RETENTION_DAYS: v.optional(integer(0, 36_500), '14'),
  MAX_CONNECTIONS: v.optional(integer(1, 1_000_000), '1024'),
  // Unset: a quarter of MAX_CONNECTIONS, at most 64 (connection-cap.ts); set, below MAX_CONNECTIONS (checked below).
  MAX_CONNECTIONS_PER_CLIENT: v.optional(integer(1, 1_000_000)),
  // Long enough not to be guessed, printable, no spaces: it is sent as a bearer token.
  SIGNIN_ATTEMPTS_PER_MINUTE: v.optional(integer(1, 100_000), '10'),
  DIRECTIVES_PER_MINUTE: v.optional(integer(1, 100_000), '60'),
  LIVE_SOCKETS_PER_USER: v.optional(integer(1, 100_000), '32'),
  MAX_UI_RESOURCE_BYTES: v.optional(integer(1024, 1_073_741_824), '5242880'),
  // The demo world's XMPP channel: all of SERVICE, JID and PASSWORD, or none (checked below). The password stays in the environment.
  DEMO_XMPP_SERVICE: v.optional(v.pipe(v.string(), v.regex(XMPP_SERVICE_PATTERN, 'must be xmpp://host:port or xmpps://host:port'))),
  DEMO_XMPP_JID: v.optional(v.pipe(v.string(), v.maxLength(1023, 'must be at most 1023 characters'), v.regex(BARE_JID_PATTERN, 'must be a bare JID (user@domain), without a resource'))),
  DEMO_XMPP_PASSWORD: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'))),
  DEMO_XMPP_MUC: v.optional(v.pipe(v.string(), v.regex(DOMAIN_PATTERN, 'must be a domain name (letters, digits, dots and hyphens)'))),
  DEMO_XMPP_NICK: v.optional(v.pipe(v.string(), v.maxLength(100, 'must be at most 100 characters'), v.regex(/^[^\s/@]+$/, 'must not be empty, nor contain spaces, / or @')), 'console'),
  // The demo world's Slack channel: both tokens or neither (checked below). The tokens stay in the environment;
  // an issue's message names the variable, never its value.
  DEMO_SLACK_APP_TOKEN: v.optional(v.pipe(v.string(), v.regex(/^xapp-\S+$/, 'must be a Slack app-level token (xapp-…, with connections:write)'))),
  DEMO_SLACK_BOT_TOKEN: v.optional(v.pipe(v.string(), v.regex(/^xoxb-\S+$/, 'must be a Slack bot token (xoxb-…)'))),
  DEMO_SLACK_API_URL: v.optional(v.pipe(v.string(), v.regex(SLACK_API_URL_PATTERN, 'must be an http or https URL ending with /'))),
  METRICS_TOKEN: v.optional(v.pipe(v.string(), v.regex(/^[\x21-\x7e]{16,512}$/, 'must be 16 to 512 printable characters without spaces'))),
  // OpenID Connect: ISSUER, CLIENT_ID and CLIENT_SECRET together or none (checked below); the secret stays here.
  OIDC_ISSUER: v.optional(issuerUrl),
  OIDC_CLIENT_ID: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'), v.maxLength(500, 'must be at most 500 characters'))),
  OIDC_CLIENT_SECRET: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'))),
  OIDC_REDIRECT_URL: v.optional(redirectUrl),
  OIDC_ALLOWED_DOMAINS: v.optional(domainList),
  OIDC_NAME: v.optional(v.pipe(v.string(), v.nonEmpty('must not be empty'), v.maxLength(100, 'must be at most 100 characters')), 'your identity provider'),
  OIDC_FIRST_ADMIN: v.optional(v.pipe(v.string(), v.regex(EMAIL_PATTERN, 'must be an email address'))),
  SESSION_TTL_HOURS: v.optional(integer(1, 8760), '168'),
});

/** Reads the configuration from environment variables; each issue names its variable. */
export function loadConfig(env: Readonly<Record<string, string | undefined>>): Result<Config, Issue[]> {
  // A DEMO_XMPP_, DEMO_SLACK_ or OIDC_ variable set empty is unset (an env file's `NAME=`, compose's `${NAME:-}`):
  // the demo stays without that channel, the service without sign-in by a provider.
  const known = Object.fromEntries(Object.keys(EnvSchema.entries).map((name) => [name, /^(DEMO_(XMPP|SLACK)|OIDC)_/.test(name) && env[name] === '' ? undefined : env[name]]));
  const parsed = v.safeParse(EnvSchema, known);
  if (!parsed.success) {
    return fail(parsed.issues.map((issue) => ({ path: v.getDotPath(issue) ?? '', message: issue.message })));
  }
  const e = parsed.output;
  const storage = e.CONSOLE_STORAGE ?? (e.DATABASE_URL === undefined ? 'embedded' : 'postgres');
  if (storage === 'postgres' && e.DATABASE_URL === undefined) {
    return fail([{ path: 'DATABASE_URL', message: 'must be set when CONSOLE_STORAGE is postgres' }]);
  }
  const demo = e.CONSOLE_WORLD === undefined && storage !== 'postgres';
  // Demo mode calls its bundled MCP provider at 127.0.0.1 on the port listened on (src/demo/provider-url.ts),
  // through this very edge: that Host is answered whatever ALLOWED_HOSTS says (port 0: the port listened
  // on). Without ALLOWED_HOSTS the loopback names at PORT hold it already.
  const demoHosts = demo && e.ALLOWED_HOSTS !== undefined ? [{ host: '127.0.0.1', port: 0 }] : [];
  const sandboxOrigin = e.ARTIFACT_SANDBOX_ORIGIN === undefined ? `http://sandbox.localhost:${e.PORT}` : e.ARTIFACT_SANDBOX_ORIGIN;
  const viewerOrigin = e.ARTIFACT_VIEWER_ORIGIN === undefined ? `http://localhost:${e.PORT}` : e.ARTIFACT_VIEWER_ORIGIN;
  // The origins' hosts are answered whatever the list says: the service serves them by definition.
  const originHosts = [sandboxOrigin, viewerOrigin].flatMap((text) => {
    const origin = text === null ? null : parseOrigin(text);
    return origin === null ? [] : [{ host: origin.host, port: origin.port }];
  });
  // As many as everyone would let one client lock every other out; a single connection in all is the one exception.
  if (e.MAX_CONNECTIONS_PER_CLIENT !== undefined && e.MAX_CONNECTIONS_PER_CLIENT >= e.MAX_CONNECTIONS && e.MAX_CONNECTIONS_PER_CLIENT > 1) {
    return fail([{ path: 'MAX_CONNECTIONS_PER_CLIENT', message: `must be below MAX_CONNECTIONS (${e.MAX_CONNECTIONS}), or 1` }]);
  }
  const xmppSet = ([['DEMO_XMPP_SERVICE', e.DEMO_XMPP_SERVICE], ['DEMO_XMPP_JID', e.DEMO_XMPP_JID], ['DEMO_XMPP_PASSWORD', e.DEMO_XMPP_PASSWORD]] as const)
    .map(([name, value]) => ({ name, set: value !== undefined }));
  if (xmppSet.some((x) => x.set) && !xmppSet.every((x) => x.set)) {
    const named = xmppSet.filter((x) => x.set).map((x) => x.name).join(' and ');
    return fail(xmppSet.filter((x) => !x.set).map((x) => ({ path: x.name, message: `must be set with ${named} (the demo world's XMPP channel needs all three)` })));
  }
  const slackSet = ([['DEMO_SLACK_APP_TOKEN', e.DEMO_SLACK_APP_TOKEN], ['DEMO_SLACK_BOT_TOKEN', e.DEMO_SLACK_BOT_TOKEN]] as const)
    .map(([name, value]) => ({ name, set: value !== undefined }));
  if (slackSet.some((x) => x.set) && !slackSet.every((x) => x.set)) {
    const named = slackSet.filter((x) => x.set).map((x) => x.name).join(' and ');
    return fail(slackSet.filter((x) => !x.set).map((x) => ({ path: x.name, message: `must be set with ${named} (the demo world's Slack channel needs both tokens)` })));
  }
  // The channel names the variables; the adapter reads the tokens from the environment when it connects.
  const demoSlack: SlackSettings | null = demo && e.DEMO_SLACK_APP_TOKEN !== undefined && e.DEMO_SLACK_BOT_TOKEN !== undefined
    ? Object.freeze({ app_token_env: 'DEMO_SLACK_APP_TOKEN', bot_token_env: 'DEMO_SLACK_BOT_TOKEN', api_url: e.DEMO_SLACK_API_URL ?? null })
    : null;
  const oidcSet = ([['OIDC_ISSUER', e.OIDC_ISSUER], ['OIDC_CLIENT_ID', e.OIDC_CLIENT_ID], ['OIDC_CLIENT_SECRET', e.OIDC_CLIENT_SECRET]] as const)
    .map(([name, value]) => ({ name, set: value !== undefined }));
  if (oidcSet.some((x) => x.set) && !oidcSet.every((x) => x.set)) {
    const named = oidcSet.filter((x) => x.set).map((x) => x.name).join(' and ');
    return fail(oidcSet.filter((x) => !x.set).map((x) => ({ path: x.name, message: `must be set with ${named} (sign-in with OpenID Connect needs all three)` })));
  }
  const oidc: OidcConfig | null = e.OIDC_ISSUER !== undefined && e.OIDC_CLIENT_ID !== undefined && e.OIDC_CLIENT_SECRET !== undefined
    ? Object.freeze({
      issuer: e.OIDC_ISSUER, clientId: e.OIDC_CLIENT_ID, clientSecret: e.OIDC_CLIENT_SECRET, redirectUrl: e.OIDC_REDIRECT_URL ?? null,
      allowedDomains: Object.freeze(e.OIDC_ALLOWED_DOMAINS ?? []), name: e.OIDC_NAME, firstAdmin: e.OIDC_FIRST_ADMIN?.toLowerCase() ?? null,
    })
    : null;
  const jidDomain = e.DEMO_XMPP_JID?.slice(e.DEMO_XMPP_JID.lastIndexOf('@') + 1) ?? '';
  const demoXmpp: XmppAccount | null = demo && e.DEMO_XMPP_SERVICE !== undefined && e.DEMO_XMPP_JID !== undefined && e.DEMO_XMPP_PASSWORD !== undefined
    ? Object.freeze({
      service: e.DEMO_XMPP_SERVICE, domain: jidDomain, muc: e.DEMO_XMPP_MUC ?? `conference.${jidDomain}`, jid: e.DEMO_XMPP_JID,
      password_env: 'DEMO_XMPP_PASSWORD', nick: e.DEMO_XMPP_NICK,
    })
    : null;
  return ok(
    Object.freeze({
      host: e.HOST,
      port: e.PORT,
      storage,
      databaseUrl: e.DATABASE_URL ?? null,
      databasePreparedStatements: e.DATABASE_PREPARED_STATEMENTS,
      dataDir: e.DATA_DIR,
      world: e.CONSOLE_WORLD ?? null,
      demo,
      demoXmpp,
      demoSlack,
      maxConnections: e.MAX_CONNECTIONS,
      maxConnectionsPerClient: e.TRUST_PROXY ? null : (e.MAX_CONNECTIONS_PER_CLIENT ?? defaultPerClientCap(e.MAX_CONNECTIONS)),
      sandboxOrigin,
      viewerOrigin,
      viewerPath: e.ARTIFACT_VIEWER_PATH,
      mcpTimeoutMs: e.MCP_TIMEOUT_MS,
      trustProxy: e.TRUST_PROXY,
      allowedHosts: Object.freeze(distinctHosts([...(e.ALLOWED_HOSTS ?? loopbackHosts(e.PORT)), ...originHosts, ...demoHosts]).map((host) => Object.freeze(host))),
      webhookAllowedHosts: Object.freeze(e.WEBHOOK_ALLOWED_HOSTS),
      logLevel: e.LOG_LEVEL,
      turnLeaseMs: e.TURN_LEASE_MS,
      chatClaimMs: e.CHAT_CLAIM_MS,
      worktreeRetentionDays: e.WORKTREE_RETENTION_DAYS,
      agentIdleTimeoutMs: e.AGENT_IDLE_TIMEOUT_MS,
      agentSandbox: e.AGENT_SANDBOX,
      metricsToken: e.METRICS_TOKEN ?? null,
      oidc,
      sessionTtlHours: e.SESSION_TTL_HOURS,
      limits: Object.freeze({
        signInsPerMinute: e.SIGNIN_ATTEMPTS_PER_MINUTE,
        directivesPerMinute: e.DIRECTIVES_PER_MINUTE,
        liveSocketsPerUser: e.LIVE_SOCKETS_PER_USER,
        uiResourceBytes: e.MAX_UI_RESOURCE_BYTES,
      }),
    }),
  );
}
