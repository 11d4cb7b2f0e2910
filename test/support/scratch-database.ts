import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/postgresql';

/** A database of its own on a PostgreSQL server, created through `url` and dropped by `drop()`. */
export interface ScratchDatabase {
  readonly url: string;
  readonly drop: () => Promise<void>;
}

/** Creates a uniquely named database beside the one `url` names, so runs never collide. */
export async function createScratchDatabase(url: string, prefix = 'console_test'): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  const maintenance = await MikroORM.init({
    clientUrl: url,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    ensureDatabase: false,
    pool: { min: 0, max: 1 },
  });
  await maintenance.em.getConnection().execute(`create database "${name}"`);
  return {
    url: scratch.toString(),
    drop: async () => {
      await maintenance.em.getConnection().execute(`drop database if exists "${name}" with (force)`);
      await maintenance.close(true);
    },
  };
}
