// The entry point. Only what a start needs before the database opens is imported statically: the
// embedded database is started on its own thread first, and the rest of the service (the logger,
// MikroORM, the agent runner, the HTTP surfaces) loads while it opens (docs/benchmarks.md, second start).
import { embeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { loadConfig } from './config.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  for (const issue of loaded.error) process.stderr.write(`Invalid configuration: ${issue.path} ${issue.message}\n`);
  process.exit(2);
}
const config = loaded.value;
const embedded = config.storage === 'embedded' ? embeddedPostgres({ dataDir: config.dataDir }) : null;
// Whether agents can be sandboxed here is tried (bwrap runs `true`) while the rest loads.
const sandboxProbe = config.agentSandbox === 'off' ? Promise.resolve(null) : import('../adapters/acp/sandbox-probe.ts').then((m) => m.probeSandbox(process.env.PATH ?? ''));
// Awaited below (by openStorage); a failure to start is answered there, never unhandled meanwhile.
embedded?.started.catch(() => {});

const [
  { createLogger },
  { boundedLogStream, dropNotices, forReader, LOG_DROP_NOTICE_MS },
  { lazily },
  { describeStartupFailure, STARTUP_FAILURE_STATUS },
  { DEMO_LOGIN_TOKEN, DEMO_MCP_PATH, openStorage, readWorld },
  { chatChannels },
  { createAcpAgentRunner },
  { agentsOnChannels },
  { agentSandbox },
] = await Promise.all([
  import('./logging.ts'),
  import('./log-stream.ts'),
  import('./lazily.ts'),
  import('./startup-failure.ts'),
  import('./open-storage.ts'),
  import('./channels/chat-channels.ts'),
  import('../adapters/acp/agent-runner.ts'),
  import('../core/agents/vocabularies.ts'),
  import('./system/agent-sandbox.ts'),
]);
// A log reader that stalls (a paused pager, a stuck shipper) costs log lines, counted, never the service.
const logOut = boundedLogStream(process.stdout);
// A terminal gets lines for a person; a pipe or a file gets JSON lines, one per record (docs/operations.md).
const log = createLogger(config.logLevel, await forReader(logOut, process.stdout.isTTY === true));
setInterval(dropNotices(logOut, log), LOG_DROP_NOTICE_MS).unref();

/** Ends a start that cannot go on: one line on stderr naming the cause, no stack, status 2. */
const refuseStart = async (error: unknown, release?: () => Promise<void>): Promise<never> => {
  const failure = describeStartupFailure(error, config);
  if (!failure.known) log.fatal({ err: error }, 'start-up failed');
  // Release what was opened (the data dir's lock, PGlite's files), but never wait long for it.
  if (release !== undefined) await Promise.race([release().catch(() => {}), new Promise((done) => setTimeout(done, 2_000).unref())]);
  await logOut.drain(1_000);
  // On a pipe nobody reads, node queues the line rather than block: then it is lost at exit.
  process.stderr.write(`${failure.line}\n`);
  return process.exit(STARTUP_FAILURE_STATUS);
};

const releaseEmbedded = async () => (await embedded?.started.catch(() => null))?.close();
const world = await readWorld(config, log).catch((error: unknown) => refuseStart(error, releaseEmbedded));
const sandboxing = agentSandbox(config, process.env, await sandboxProbe);
// Said at every start: where there is no sandbox, an agent that runs a shell reads what the service's user can.
if (sandboxing.state.kind === 'bubblewrap') log.info({ agentSandbox: sandboxing.state }, 'agents run in a sandbox');
else log.warn({ agentSandbox: sandboxing.state }, 'agents run without a sandbox');
const runner = createAcpAgentRunner({ log, env: process.env, ...(sandboxing.sandbox === null ? {} : { sandbox: sandboxing.sandbox }) });
// The world's agents on a channel start now, while the database opens: readiness waits for their first
// answers. The catalog's agent takes its process only if it is the same one (docs/benchmarks.md, second start).
if (world !== null) runner.prestart(agentsOnChannels(world.channels, world.agents));

const [
  { createMemoryEventBus },
  { createPostgresEventBus },
  { createApp },
  { attach, connectionCounts, createListener, listen, shutdown, SHUTDOWN_GRACE_MS },
  { demoProviderMount },
  { exitOnSignals },
  { demoProviderFetch },
] = await Promise.all([
  import('../adapters/memory/event-bus.ts'),
  import('../adapters/postgres/event-bus.ts'),
  import('./app.ts'),
  import('./server.ts'),
  import('./demo/provider-mount.ts'),
  import('./exit-on-signals.ts'),
  import('./demo/provider-url.ts'),
  // Loaded here, beside the database's start, rather than inside openStorage after it.
  config.storage === 'memory' ? null : import('./open-database.ts'),
]).catch((error: unknown) => refuseStart(error, releaseEmbedded));
const storage = await openStorage(config, log, embedded, world).catch((error: unknown) => refuseStart(error, releaseEmbedded));
// A world with chat channels (xmpp, slack): each gets its bot connection (docs/channels.md); without one, the world file's channels.
const channels = await chatChannels({
  world, env: process.env, catalog: storage.catalog, log, file: String(config.world ?? 'the demo world'), living: (channel) => storage.conversations.livingOn(channel),
  // A chat message's claim is renewed while its listener handles it: one that died gives it up after CHAT_CLAIM_MS.
  claimMs: config.chatClaimMs,
})
  .catch((error: unknown) => refuseStart(error, storage.close));
const server = createListener({ maxConnections: config.maxConnections, maxConnectionsPerClient: config.maxConnectionsPerClient });
const bus = await (config.storage === 'postgres'
  ? createPostgresEventBus({
      url: config.databaseUrl!,
      events: storage.events,
      // The in-process bus fans this instance's events out; the PostgreSQL bus adds the other instances.
      local: createMemoryEventBus({ onListenerError: (error) => log.warn({ err: error }, 'event bus') }),
      onError: (error) => log.warn({ err: error }, 'event bus'),
    })
  : Promise.resolve(createMemoryEventBus({ onListenerError: (error) => log.warn({ err: error }, 'event bus listener failed') }))
).catch((error: unknown) => refuseStart(error, storage.close));
// The MCP SDK client is imported on the first artifact load, or once the service listens: a start to
// /readyz needs none of it (docs/benchmarks.md, cold start).
const mcp = lazily(async () => (await import('../adapters/mcp/fetch-ui-resource.ts')).createFetchUiResource({ log, maxBytes: config.limits.uiResourceBytes }));
// Sign-in with the identity provider, when configured: openid-client is loaded only then; the provider is
// discovered on the first sign-in (a provider down at start does not stop the service).
const identityProvider = config.oidc === null ? null : (await import('../adapters/openid-client/identity-provider.ts')).openIdIdentityProvider({
  issuer: config.oidc.issuer, clientId: config.oidc.clientId, clientSecret: config.oidc.clientSecret,
});
const app = createApp({
  config,
  log,
  storage,
  bus,
  ...(identityProvider === null ? {} : { identityProvider }),
  runner,
  offers: runner.offers,
  warmOffers: true,
  agentSandbox: sandboxing.state,
  ...(channels === null ? {} : { channels }),
  // Who a chat sender is: the world file's links of its chat channels, then the links users made.
  worldLinks: (channel) => [...(world?.xmpp ?? []), ...(world?.slack ?? [])].find((setting) => setting.channel === channel.id)?.links ?? {},
  connections: connectionCounts(server),
  // The demo world's provider is this service: its URL takes the port listened on, at each load.
  fetchUiResource: config.demo ? demoProviderFetch(mcp.call, () => listening) : mcp.call,
  // The demo world's provider is bundled: served here, on the console origin, only when the demo world is.
  mounts: config.demo ? [demoProviderMount(DEMO_MCP_PATH)] : [],
  logLinesDropped: logOut.dropped,
});
attach(server, app, log);
// The chat channels' adapters hand people's messages to the app from now on (it is built after them).
channels?.listen(app.chat);
// Drain, then exit; exit anyway once HARD_EXIT_MS have passed, whatever is still in flight.
exitOnSignals({ log, stop: () => shutdown(server, app, SHUTDOWN_GRACE_MS), flushLog: logOut.drain });

let listening = config.port;
const port = await listen(server, config.port, config.host).catch((error: unknown) => refuseStart(error, app.close));
listening = port;
// Loopback is shown as localhost: the default viewer origin, and the name browsers give *.localhost to.
const shownHost = ['127.0.0.1', '::1', 'localhost'].includes(config.host) ? 'localhost' : config.host;
const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
log.info({ url, sandboxOrigin: config.sandboxOrigin, storage: config.storage }, 'console service listening');
// Warmed a moment later, so the import does not hold up the first requests of a start.
setTimeout(mcp.warm, 2_000).unref();
// The banner goes to stderr, apart from the JSON log: it is the one place a (demo) token is shown. On a
// pipe nobody reads, node queues it (it never blocks), and a stop drops it.
process.stderr.write(
  `\nConsole service on ${url}\n` +
    `  sandbox origin: ${config.sandboxOrigin ?? '(none: artifact loads answer 503)'}\n` +
    (config.demo ? `  demo login token (alice): ${DEMO_LOGIN_TOKEN}   e.g. curl -H 'Authorization: Bearer ${DEMO_LOGIN_TOKEN}' ${url}/api/console/threads\n` : '') +
    '\n',
);

