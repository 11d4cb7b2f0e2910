import { createAcpAgentRunner } from '../adapters/acp/agent-runner.ts';
import { createFetchUiResource } from '../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import { createApp } from './app.ts';
import { createLogger } from './logging.ts';
import { loadConfig } from './config.ts';
import { attach, createListener, listen, shutdown } from './server.ts';
import { demoProviderMount } from './demo/provider-mount.ts';
import { DEMO_LOGIN_TOKEN, DEMO_MCP_PATH, openStorage, WorldFileError } from './storage.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  for (const issue of loaded.error) process.stderr.write(`Invalid configuration: ${issue.path} ${issue.message}\n`);
  process.exit(2);
}
const config = loaded.value;
const log = createLogger(config.logLevel);

let storage;
try {
  storage = await openStorage(config, log);
} catch (error) {
  if (error instanceof WorldFileError) {
    process.stderr.write(`Invalid world file: ${error.message}\n`);
    process.exit(2);
  }
  log.fatal({ err: error }, 'storage could not be opened');
  process.exit(1);
}
const server = createListener();
const bus =
  config.storage === 'postgres'
    ? await createPostgresEventBus({
        url: config.databaseUrl!,
        events: storage.events,
        onError: (error) => log.warn({ err: error }, 'event bus'),
      })
    : createMemoryEventBus({ onListenerError: (error) => log.warn({ err: error }, 'event bus listener failed') });
const app = createApp({
  config,
  log,
  storage,
  bus,
  runner: createAcpAgentRunner({ log, env: process.env }),
  fetchUiResource: createFetchUiResource({ log }),
  // The demo world's provider is bundled: served here, on the console origin, only when the demo world is.
  mounts: config.world === null ? [demoProviderMount(DEMO_MCP_PATH)] : [],
});
attach(server, app);
let stopping = false;
const stop = (signal: string): void => {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'shutting down');
  shutdown(server, app).then(
    () => process.exit(0),
    (error: unknown) => {
      log.error({ err: error }, 'shutdown failed');
      process.exit(1);
    },
  );
};
process.on('SIGTERM', () => stop('SIGTERM'));
process.on('SIGINT', () => stop('SIGINT'));

const port = await listen(server, config.port, config.host);
// Loopback is shown as localhost: the default viewer origin, and the name browsers give *.localhost to.
const shownHost = ['127.0.0.1', '::1', 'localhost'].includes(config.host) ? 'localhost' : config.host;
const url = `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${port}`;
log.info({ url, sandboxOrigin: config.sandboxOrigin, storage: config.storage }, 'console service listening');
// The banner goes to stderr, apart from the JSON log: it is the one place a (demo) token is shown.
process.stderr.write(
  `\nConsole service on ${url}\n` +
    `  sandbox origin: ${config.sandboxOrigin ?? '(none: artifact loads answer 503)'}\n` +
    (config.world === null ? `  demo login token (alice): ${DEMO_LOGIN_TOKEN}   e.g. curl -H 'Authorization: Bearer ${DEMO_LOGIN_TOKEN}' ${url}/api/console/threads\n` : '') +
    '\n',
);

