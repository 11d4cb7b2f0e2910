import type { MikroORM } from '@mikro-orm/postgresql';

/** pg's error when a statement got no answer within `query_timeout`. */
export const QUERY_READ_TIMEOUT = 'Query read timeout';

export interface PgConnection {
  __knex__disposed?: unknown;
  readonly connection?: { readonly stream?: { destroy: () => void } };
}

/**
 * After pg's `query_timeout` the connection still waits for its statement's answer, and the
 * statements queued behind it (a transaction's ROLLBACK) are dropped unsent: returned to the pool,
 * it would carry a half-open transaction into the next request once the database answers again.
 * A connection whose statement timed out is therefore cut (the server rolls back what it held) and
 * marked as knex marks a broken one, so the pool discards it. Knex has no hook for this: its
 * client's `_query` is wrapped.
 */
export function discardTimedOutConnections(orm: MikroORM): void {
  const client = orm.em.getConnection().getKnex().client as {
    _query: (connection: PgConnection, query: unknown) => Promise<unknown>;
  };
  const run = client._query.bind(client);
  client._query = (connection, query) =>
    run(connection, query).catch((error: unknown) => {
      discardIfTimedOut(connection, error);
      throw error;
    });
}

/**
 * Cuts a connection whose statement got no answer in time and marks it for the pool to discard (see
 * `discardTimedOutConnections`); any other error leaves it be. `runStatement` sends its statements
 * on the connection itself, not through knex's `_query`, and calls this on their errors.
 */
export function discardIfTimedOut(connection: PgConnection, error: unknown): void {
  if (error instanceof Error && error.message === QUERY_READ_TIMEOUT) {
    connection.__knex__disposed = QUERY_READ_TIMEOUT; // not the error: its message holds the statement
    connection.connection?.stream?.destroy();
  }
}
