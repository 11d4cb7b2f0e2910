import type { MikroORM } from '@mikro-orm/postgresql';
import { postgresql } from './packages.ts';
import { ENTITIES } from './entities/index.ts';
import { MIGRATIONS_TABLE } from './migrate.ts';
import { DatabaseOpenError } from './open-error.ts';
import { discardTimedOutConnections } from './query-timeout.ts';
import { nameStatements, withValues } from './sql.ts';

/**
 * How long one statement, a new connection's handshake, or a wait for a pooled connection may take
 * before it fails (and the request answers 503): a frozen database never holds a request longer.
 */
export const QUERY_TIMEOUT_MS = 5_000;

/** How to reach the database. */
export interface OrmOptions {
  /** A postgres:// URL (PostgreSQL, or the embedded PGlite socket). */
  readonly clientUrl: string;
  /** Most connections the pool opens; keep it small on the embedded socket (its limit must exceed it by 2). */
  readonly pool?: number;
  /** Called with the text of every SQL statement sent, before it is sent (tests count reads with it). */
  readonly onQuery?: (sql: string) => void;
  /** QUERY_TIMEOUT_MS unless given; null for none (`npm run db:migrate`, whose migrations may be long). */
  readonly queryTimeoutMs?: number | null;
  /**
   * Settles once the database at `clientUrl` can be reached (the embedded one opening meanwhile): the
   * ORM's metadata is discovered before, its first connection made after. A rejection is the open's
   * failure, thrown as it is.
   */
  readonly reachable?: Promise<unknown>;
  /**
   * The prepared statements (sql.ts) sent by name, each parsed and planned once per connection: for a PostgreSQL
   * server, where each connection is a session of its own. Never for the embedded socket, whose connections share
   * one session (it keeps a plan per statement text itself), nor through a pooler that does not keep them.
   */
  readonly namedStatements?: boolean;
}

/**
 * Connects MikroORM with the explicit entity list and migrations; no global context, no file
 * discovery. Throws DatabaseOpenError (one line, no password) when the database cannot be reached,
 * does not exist or refuses the credentials: it is checked before anything else runs, because the
 * migrator would otherwise create a missing database, and a service must never do that.
 */
export async function openOrm(options: OrmOptions): Promise<MikroORM> {
  const timeout = options.queryTimeoutMs === undefined ? QUERY_TIMEOUT_MS : options.queryTimeoutMs;
  const orm = await postgresql.MikroORM.init({
    clientUrl: options.clientUrl,
    entities: [...ENTITIES],
    // The migrator is not an extension: `migrate` imports it, with the migrations, only when one is pending.
    migrations: { tableName: MIGRATIONS_TABLE, snapshot: false, silent: true },
    // The database exists already (a DATABASE_URL names it; PGlite has one); creating it would need
    // a second, maintenance connection.
    ensureDatabase: false,
    // Connected below, once the database can be reached.
    connect: false,
    metadataCache: { enabled: false },
    discovery: { disableDynamicFileAccess: true },
    // min 0: no connection is held open for nothing, and a restarted server is reconnected lazily.
    pool: { min: 0, max: options.pool ?? 10 },
    allowGlobalContext: false,
    // pg's own time-outs: a statement without an answer (query_timeout, on the client, so it also
    // covers a network that stopped delivering), a handshake, and knex's wait for a pooled connection.
    driverOptions: {
      ...(timeout === null
        ? {}
        : { connection: { query_timeout: timeout, connectionTimeoutMillis: timeout, keepAlive: true }, acquireConnectionTimeout: timeout }),
      // Knex would print its warnings (a broken pooled connection, with the statement that broke it)
      // to the console; the failures reach the service's log through the errors they raise instead.
      log: { warn: () => {}, error: () => {}, deprecate: () => {}, debug: () => {} },
    },
  });
  try {
    await options.reachable;
    await orm.connect();
  } catch (error) {
    await orm.close(true);
    throw error;
  }
  if (timeout !== null) discardTimedOutConnections(orm);
  if (options.namedStatements === true) nameStatements(orm);
  const check = await orm.checkConnection();
  if (!check.ok) {
    await orm.close(true);
    throw new DatabaseOpenError(options.clientUrl, check.error);
  }
  const onQuery = options.onQuery;
  if (onQuery !== undefined) {
    // The knex client sees every statement, including those of transactions and migrations.
    // A prepared statement (sql.ts) is shown with its values in place, as a plain one is sent.
    const platform = orm.em.getConnection().getPlatform();
    orm.em.getConnection().getKnex().client.on('query', (query: { sql: string; bindings?: readonly unknown[] }) =>
      onQuery(query.bindings === undefined || query.bindings.length === 0 ? query.sql : withValues(platform, query.sql, query.bindings)));
  }
  return orm;
}
