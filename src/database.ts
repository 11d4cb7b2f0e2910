import type { Logger } from 'pino';
import type { World } from '../domain/world.ts';
import type { Storage } from '../ports/storage.ts';
import type { Config } from './config.ts';

/** Opens MikroORM on PostgreSQL (`postgres`) or on embedded PGlite (`embedded`). */
export async function openDatabaseStorage(config: Config, log: Logger, world: World): Promise<Storage> {
  void config;
  void world;
  log.error('database storage is not wired yet');
  throw new Error('database storage is not wired yet');
}
