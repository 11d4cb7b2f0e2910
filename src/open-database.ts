import type { Logger } from 'pino';
import { EMBEDDED_POOL_SIZE, embeddedPostgres, type EmbeddedPostgresStart } from '../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import type { World } from '../domain/world.ts';
import type { Storage } from '../ports/storage.ts';
import type { Config } from './config.ts';

/** The ids of `world`'s chat channels (xmpp, slack): those with settings of a platform adapter. */
const chatChannelIds = (world: World): string[] => [...(world.xmpp ?? []), ...(world.slack ?? [])].map((setting) => setting.channel);

/** A world of `world`'s chat channels (xmpp, slack) alone: importing it upserts their catalog rows and nothing else. */
const chatChannelsOf = (world: World): World => {
  const ids = new Set(chatChannelIds(world));
  return {
    users: [], projects: [], agents: [], channels: world.channels.filter((c) => ids.has(c.id)), installations: [], artifacts: [], threads: [],
    xmpp: world.xmpp ?? [], slack: world.slack ?? [],
  };
};

/**
 * Opens MikroORM on PostgreSQL (`postgres`) or on embedded PGlite in `DATA_DIR` (`embedded`),
 * migrating as it opens, then loads the world: a named world file at every start (upsert by id),
 * the demo world only into an empty database (its XMPP and Slack channels, when set, at every start); null, none. `start` is the embedded database's
 * start when the caller began it already (main.ts does first, so it opens while the service loads); the
 * ORM's metadata is discovered while it opens.
 */
export async function openDatabaseStorage(config: Config, log: Logger, world: World | null, start?: EmbeddedPostgresStart | null): Promise<Storage> {
  const starting = config.storage === 'embedded' ? (start ?? embeddedPostgres({ dataDir: config.dataDir })) : null;
  try {
    const storage = await createMikroOrmStorage(
      starting === null
        ? { clientUrl: config.databaseUrl!, namedStatements: config.databasePreparedStatements === 'named' }
        : { clientUrl: starting.url, pool: EMBEDDED_POOL_SIZE, reachable: starting.started },
      // The embedded database is this process's alone (its data dir locked): its catalog is kept in memory until a
      // world import, and credentials found are kept until a write of this process's changes them. A PostgreSQL server
      // may have other instances importing worlds and revoking tokens: read each time there.
      { catalog: starting !== null, credentials: starting !== null },
    );
    if (world === null) {
      if (await storage.isEmpty()) log.warn('no world imported and the database holds no user: set CONSOLE_WORLD to a world file to import one');
    } else if (config.world !== null || (await storage.isEmpty())) {
      await storage.importWorld(world);
      log.info({ world: config.world ?? 'demo' }, 'world imported');
    } else if (chatChannelIds(world).length > 0) {
      // The demo world's chat channels (XMPP, Slack), set on a later start than the first: their catalog rows alone, the rest kept.
      await storage.importWorld(chatChannelsOf(world));
      log.info({ channels: chatChannelIds(world) }, 'demo chat channels imported');
    }
    return {
      ...storage,
      close: async () => {
        await storage.close();
        await (await starting?.started)?.close();
      },
    };
  } catch (error) {
    // A database that did start is closed (its data dir flushed, its lock released), whatever failed after.
    await (await starting?.started.catch(() => null))?.close();
    throw error;
  }
}
