import { MikroORM } from '@mikro-orm/postgresql';
import { Migrator } from '@mikro-orm/migrations';
import { ENTITIES } from './entities/index.ts';
import { MIGRATIONS, MIGRATIONS_TABLE } from './migrate.ts';

/** How to reach the database. */
export interface OrmOptions {
  /** A postgres:// URL (PostgreSQL, or the embedded PGlite socket). */
  readonly clientUrl: string;
  /** Most connections the pool opens; keep it small on the embedded socket (its limit must exceed it by 2). */
  readonly pool?: number;
  /** Called with the text of every SQL statement sent, before it is sent (tests count reads with it). */
  readonly onQuery?: (sql: string) => void;
}

/** Connects MikroORM with the explicit entity list and migrations; no global context, no file discovery. */
export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  const orm = await MikroORM.init({
    clientUrl: options.clientUrl,
    entities: [...ENTITIES],
    extensions: [Migrator],
    migrations: { migrationsList: MIGRATIONS, tableName: MIGRATIONS_TABLE, snapshot: false, silent: true },
    // The database exists already (a DATABASE_URL names it; PGlite has one); creating it would need
    // a second, maintenance connection.
    ensureDatabase: false,
    metadataCache: { enabled: false },
    discovery: { disableDynamicFileAccess: true },
    // min 0: no connection is held open for nothing, and a restarted server is reconnected lazily.
    pool: { min: 0, max: options.pool ?? 10 },
    allowGlobalContext: false,
  });
  const onQuery = options.onQuery;
  if (onQuery !== undefined) {
    // The knex client sees every statement, including those of transactions and migrations.
    orm.em.getConnection().getKnex().client.on('query', (query: { sql: string }) => onQuery(query.sql));
  }
  return orm;
}
