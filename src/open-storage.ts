import type { Logger } from 'pino';
import type { EmbeddedPostgresStart } from '../adapters/embedded/pglite-server.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import type { World } from '../domain/world.ts';
import type { Storage } from '../ports/storage.ts';
import type { Config } from './config.ts';
import { demoRepository, withDemoRepository } from './demo/demo-repository.ts';
import { withDemoSlackChannel } from './demo/slack-channel.ts';
import { withDemoXmppChannel } from './demo/xmpp-channel.ts';
import { loadWorldFile } from './world/load.ts';

/** The demo world `npm start` serves when no world file is named. */
export const DEMO_WORLD = new URL('./world/demo-world.json', import.meta.url);

/** The demo world's login token for alice, printed by `npm start`. */
export const DEMO_LOGIN_TOKEN = 'dev-alice';

/** A world file that failed validation: the message names the file, each path and each reason. */
export class WorldFileError extends Error {
  constructor(file: string, issues: readonly { path: string; message: string }[]) {
    super(`${file}: ${issues.map((issue) => `${issue.path || '(file)'} ${issue.message}`).join('; ')}`);
    this.name = 'WorldFileError';
  }
}

/** The path the bundled demo MCP server is mounted at, in demo mode. */
export const DEMO_MCP_PATH = '/demo/mcp';

/**
 * The world to load: the named file, the demo world (`config.demo`), or none (PostgreSQL, no file named).
 * The demo world's repository project is made under DATA_DIR first (`log` says so when it cannot be).
 */
export async function readWorld(config: Config, log?: Pick<Logger, 'info' | 'warn'>): Promise<World | null> {
  if (config.world === null && !config.demo) return null;
  let repo: string | null = null;
  if (config.world === null) {
    const made = await demoRepository(config.dataDir);
    if ('path' in made) repo = made.path;
    else log?.warn({ reason: made.skipped }, `the demo world goes without its repository project (${made.skipped})`);
  }
  // The demo world offers its XMPP and Slack channels only when their DEMO_XMPP_ and DEMO_SLACK_ variables are set
  // (config.demoXmpp, config.demoSlack).
  const loaded = config.world === null
    ? await loadWorldFile(DEMO_WORLD, (value) => withDemoRepository(withDemoSlackChannel(withDemoXmppChannel(value, config.demoXmpp), config.demoSlack), repo))
    : await loadWorldFile(config.world);
  if (!loaded.ok) throw new WorldFileError(String(config.world ?? 'the demo world'), loaded.error);
  // The demo world is stored as written: its provider's port is resolved when a load runs
  // (src/demo/provider-url.ts), so a restart on another PORT still finds it.
  return loaded.value;
}

/**
 * Opens the configured storage and loads the world: in memory mode the world is the whole state;
 * in the database modes a named world file is imported (upsert by id) at every start, and the demo
 * world only into an empty embedded database, so a restart keeps what was written. A PostgreSQL
 * server gets no world unless one is named: the demo's tokens are published. `embedded` is the
 * embedded database when the caller started it already; `read` the world when the caller read it already.
 */
export async function openStorage(config: Config, log: Logger, embedded?: EmbeddedPostgresStart | null, read?: World | null): Promise<Storage> {
  const world = read === undefined ? await readWorld(config, log) : read;
  if (config.storage === 'memory') {
    const storage = createMemoryStorage();
    if (world !== null) await storage.importWorld(world);
    return storage;
  }
  const { openDatabaseStorage } = await import('./open-database.ts');
  return openDatabaseStorage(config, log, world, embedded);
}
