import type { MikroORM } from '@mikro-orm/postgresql';
import type { Id, Page } from '../../domain/model.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { discardIfTimedOut, type PgConnection } from './query-timeout.ts';

/** What `runStatement` needs of knex's client: its pool, and its `query` event. */
interface KnexClient {
  readonly pool?: { readonly max: number; numPendingAcquires(): number };
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  emit(event: 'query', query: { sql: string; bindings: readonly unknown[] }): boolean;
}

/** A pooled pg client, as far as telling whether it can take another statement goes. */
interface PooledConnection {
  readonly __knex__disposed?: unknown;
  readonly _ending?: boolean;
  readonly _queryable?: boolean;
}

/**
 * Per knex client: how many connections `runStatement` holds or has asked the pool for, and the
 * statements waiting for one of them because that is already the pool's size.
 */
interface Lane {
  held: number;
  readonly waiting: { resolve: (connection: unknown) => void; reject: (error: unknown) => void }[];
}

const lanes = new WeakMap<KnexClient, Lane>();

/**
 * A connection for one statement. While the statements hold fewer connections than the pool has,
 * it is asked of the pool (tarn: an acquire costs some twenty promises and a timer, a validation
 * included); once they hold them all, the statement waits here and is handed the next connection a
 * statement gives back (`giveBack`), as pg's own pool does, without the pool in between. Bounded:
 * every held connection is given back within the statement time-out.
 */
function lease(client: KnexClient, lane: Lane): Promise<unknown> {
  const pool = client.pool;
  if (pool !== undefined && lane.held >= pool.max) return new Promise((resolve, reject) => lane.waiting.push({ resolve, reject }));
  lane.held += 1;
  return client.acquireConnection().catch((error: unknown) => {
    lane.held -= 1;
    pump(client, lane);
    throw error;
  });
}

/** Asks the pool for a connection for each waiting statement there is room for (after a connection went back to it, or an ask failed). */
function pump(client: KnexClient, lane: Lane): void {
  const max = client.pool?.max ?? 0;
  while (lane.waiting.length > 0 && lane.held < max) {
    const waiter = lane.waiting.shift()!;
    lane.held += 1;
    client.acquireConnection().then(waiter.resolve, (error: unknown) => {
      lane.held -= 1;
      waiter.reject(error);
      pump(client, lane);
    });
  }
  // No pool any more (destroyed): whoever still waits is told, as the pool would tell them.
  if (client.pool === undefined) for (const waiter of lane.waiting.splice(0)) waiter.reject(new Error('Unable to acquire a connection'));
}

/**
 * Gives a statement's connection back: straight to the next statement waiting, unless the
 * connection cannot take another (discarded after a time-out, broken, ending) or someone else
 * (a transaction) waits for the pool, who is then not passed over; else to the pool.
 */
function giveBack(client: KnexClient, lane: Lane, connection: unknown): void {
  const pooled = connection as PooledConnection;
  const usable = pooled.__knex__disposed === undefined && pooled._ending !== true && pooled._queryable !== false;
  if (usable && lane.waiting.length > 0 && client.pool !== undefined && client.pool.numPendingAcquires() === 0) {
    lane.waiting.shift()!.resolve(connection);
    return;
  }
  lane.held -= 1;
  void client.releaseConnection(connection);
  pump(client, lane);
}

/**
 * Sends one statement as a simple-protocol query on the connection itself, what knex's `_query`
 * does for a statement without bindings, without its promise and the time-out guard's around it: one
 * promise, and a connection whose statement timed out is discarded as the guard does.
 */
function send<Row>(connection: unknown, text: string): Promise<Row[]> {
  return new Promise((resolve, reject) => {
    (connection as PgClient).query(text, (error, result) => {
      if (error === null || error === undefined) return resolve(result.rows as Row[]);
      discardIfTimedOut(connection as PgConnection, error);
      reject(error);
    });
  });
}

/** A pg client as `send` uses it. */
interface PgClient {
  query(text: string, callback: (error: Error | null | undefined, result: { rows: unknown[] }) => void): void;
}

/**
 * Runs one statement with `?` bindings and answers its rows. The values are escaped into the text by
 * MikroORM's platform (pg's escapeLiteral; objects as JSON), as its own `execute` does, so values are
 * never concatenated by hand here and a `?` inside a value is never taken for a binding; the text is
 * then sent as one simple-protocol query on a connection of the ORM's own pool. `execute`'s query
 * builder, logging and result wrapping are skipped: they cost a read more than the driver does (see
 * docs/benchmarks.md). The statement still goes through knex's client: its `query` event (the counts in
 * tests), its pool and the pool's time-out; a connection whose statement timed out is discarded as the
 * guard on knex's `_query` does (`send`); under load a connection goes from one statement to the next
 * waiting one without the pool (`lease`).
 */
export async function runStatement<Row>(orm: MikroORM, sql: string, params: readonly unknown[]): Promise<Row[]> {
  const connection = orm.em.getConnection();
  const text = connection.getPlatform().formatQuery(sql, [...params]);
  const client = connection.getKnex().client as unknown as KnexClient;
  let lane = lanes.get(client);
  if (lane === undefined) lanes.set(client, (lane = { held: 0, waiting: [] }));
  try {
    const pooled = await lease(client, lane);
    try {
      client.emit('query', { sql: text, bindings: [] });
      return await send<Row>(pooled, text);
    } finally {
      giveBack(client, lane, pooled);
    }
  } catch (error) {
    throw isConnectionError(error) ? new StorageUnavailableError({ cause: error }) : error;
  }
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03']);

/** Whether an error means the database could not be reached, rather than a bad statement. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // Class 08 is connection exceptions, but 08P01 (protocol violation) is what a bad value causes: not an outage.
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || (code.startsWith('08') && code !== '08P01'))) return true;
  // A statement or handshake without an answer in time (orm.ts sets the time-outs) is an outage too.
  return error.name === 'KnexTimeoutError' || /Connection terminated|connection is closed|not queryable|Query read timeout|timeout expired/i.test(error.message);
}

/** A timestamptz column as the ISO string the rows answer (UTC, milliseconds), whatever the session time zone. */
export const iso = (column: string): string =>
  `to_char(${column} at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** Whether an id can be compared with a uuid column; anything else names no row (and would be an SQL error). */
export const isUuid = (id: string): boolean => UUID_PATTERN.test(id);

/** Fixed SQL text for an optional keyset bound: `and <column> < ?` when there is a cursor. */
export const olderThan = (column: string, before: Id | null): { sql: string; params: Id[] } =>
  before === null ? { sql: '', params: [] } : { sql: ` and ${column} < ?`, params: [before] };

/** Cuts a page from rows fetched with `limit + 1`: the extra row only tells that there is a next page. */
export function pageOf<T extends { readonly id: Id }>(rows: readonly T[], limit: number): Page<T> {
  const items = rows.slice(0, limit);
  return { items, next: rows.length > limit ? items.at(-1)!.id : null };
}
