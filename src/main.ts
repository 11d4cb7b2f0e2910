import pino from 'pino';
import { createApp } from './app.ts';
import { loadConfig } from './config.ts';
import { attach, createListener, listen, shutdown } from './server.ts';
import { openStorage, WorldFileError } from './storage.ts';

const loaded = loadConfig(process.env);
if (!loaded.ok) {
  for (const issue of loaded.error) process.stderr.write(`Invalid configuration: ${issue.path} ${issue.message}\n`);
  process.exit(2);
}
const config = loaded.value;
const log = pino({ level: config.logLevel });

let storage;
try {
  storage = await openStorage(config, log);
} catch (error) {
  log.fatal({ err: error }, 'storage could not be opened');
  process.exit(error instanceof WorldFileError ? 2 : 1);
}
const server = createListener();
const app = createApp({ config, log, storage });
attach(server, app);
const port = await listen(server, config.port, config.host);
log.info(
  { url: `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`, sandboxOrigin: config.sandboxOrigin },
  'console service listening',
);

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
