import type { MikroORM } from '@mikro-orm/postgresql';
import { createHash } from 'node:crypto';
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

/** A statement waiting for a connection: told the connection, or why there is none. */
type Waiter = (error: unknown, connection?: unknown) => void;

/**
 * Per knex client: how many connections `runStatement` holds or has asked the pool for, and the
 * statements waiting for one of them because that is already the pool's size.
 */
interface Lane {
  held: number;
  readonly waiting: Waiter[];
  /**
   * The last statement failed for an outage (no connection, or no answer in time), and none has
   * succeeded since: while one statement tries the database, the others fail at once.
   */
  down: boolean;
}

const lanes = new WeakMap<KnexClient, Lane>();

/** The lane of a knex client, made on its first statement. */
function laneOf(client: KnexClient): Lane {
  let lane = lanes.get(client);
  if (lane === undefined) lanes.set(client, (lane = { held: 0, waiting: [], down: false }));
  return lane;
}

/**
 * A connection for one statement, told to `use`. While the statements hold fewer connections than
 * the pool has, it is asked of the pool (tarn: an acquire costs some twenty promises and a timer, a
 * validation included); once they hold them all, the statement waits here (a callback, no promise)
 * and is handed the next connection a statement gives back (`giveBack`), as pg's own pool does,
 * without the pool in between. Bounded: every held connection is given back within the statement
 * time-out.
 */
function lease(client: KnexClient, lane: Lane, use: Waiter): void {
  const pool = client.pool;
  // The database is away: one statement at a time tries it (its success ends the outage); the others
  // fail at once, where waiting would only cost each a time-out more.
  if (lane.down && lane.held > 0) return use(new StorageUnavailableError({ cause: new Error('the database did not answer the statements before this one') }));
  if (pool !== undefined && lane.held >= pool.max) {
    lane.waiting.push(use);
    return;
  }
  acquire(client, lane, use);
}

/** Asks the pool for a connection for `use` (counted as held until it is given back, or the ask failed). */
function acquire(client: KnexClient, lane: Lane, use: Waiter): void {
  lane.held += 1;
  client.acquireConnection().then(
    (connection) => use(undefined, connection),
    (error: unknown) => {
      lane.held -= 1;
      if (isConnectionError(error)) outage(lane, error);
      use(error);
      pump(client, lane);
    },
  );
}

/**
 * A statement failed for an outage: the statements waiting for a connection would each be handed one
 * that is as dead (or a new one whose handshake times out) and fail one after another, a time-out
 * each; they fail now, together, and so does every statement that would wait until one succeeds.
 */
function outage(lane: Lane, cause: unknown): void {
  lane.down = true;
  for (const waiter of lane.waiting.splice(0)) waiter(new StorageUnavailableError({ cause }));
}

/** Asks the pool for a connection for each waiting statement there is room for (after a connection went back to it, or an ask failed). */
function pump(client: KnexClient, lane: Lane): void {
  const max = client.pool?.max ?? 0;
  while (lane.waiting.length > 0 && lane.held < max) acquire(client, lane, lane.waiting.shift()!);
  // No pool any more (destroyed): whoever still waits is told, as the pool would tell them.
  if (client.pool === undefined) for (const waiter of lane.waiting.splice(0)) waiter(new Error('Unable to acquire a connection'));
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
    lane.waiting.shift()!(undefined, connection);
    return;
  }
  lane.held -= 1;
  void client.releaseConnection(connection);
  pump(client, lane);
}

/** A pg client as `runStatement` uses it: a simple-protocol query, or one with its values apart, with a callback. */
interface PgClient {
  query(query: string | { text: string; values: readonly unknown[] }, callback: (error: Error | null | undefined, result: { rows: unknown[] }) => void): void;
}

/**
 * A statement sent with its values apart from its text (PostgreSQL's extended protocol), where a
 * plain statement has them escaped into it. Its text is the same every time, so a plan made for it
 * can be kept: the embedded database keeps one per text (adapters/embedded/statement-cache.mjs),
 * which is most of a statement's cost there. For the statements of the hot path (a turn's); each
 * binding must have a type PostgreSQL can tell from where it stands (a column, a cast), and the text
 * may hold no `??` or `\?`.
 */
export interface Prepared {
  /** The text with `?` bindings. */
  readonly text: string;
  /** The text with PostgreSQL's `$1`, `$2`… */
  readonly positional: string;
  /** Its name where statements are named (`nameStatements`): made of the text, so the same in every process. */
  readonly name: string;
}

/** A {@link Prepared} statement of `text` (made once, where the statement is defined). */
export function prepared(text: string): Prepared {
  const numbered = positional(text);
  return { text, positional: numbered, name: `console_${createHash('sha256').update(numbered).digest('hex').slice(0, 16)}` };
}

/** The ORMs whose prepared statements are sent by name (on a PostgreSQL server: `OrmOptions.namedStatements`). */
const NAMED = new WeakSet<MikroORM>();

/**
 * From now on, `orm`'s prepared statements are sent by name: pg prepares each once per connection (its Parse
 * sent the first time, only Bind and Execute after) and the server keeps its plan there. Statements sent unnamed
 * are parsed and planned at every call, which on PostgreSQL is a good part of a short statement's cost
 * (docs/benchmarks.md, schedule lag).
 */
export function nameStatements(orm: MikroORM): void {
  NAMED.add(orm);
}

/** What pg is given for a statement: a plain text, or a prepared one's text and values, by name where `named`. */
const queryOf = (sql: string | Prepared, text: string, params: readonly unknown[], named: boolean) =>
  typeof sql === 'string' ? text : named ? { name: sql.name, text, values: params } : { text, values: params };

/** A positional statement (`$1`…) with its values escaped into it, as `statementText` fills `?` bindings. */
export function withValues(platform: QuotingPlatform, text: string, values: readonly unknown[]): string {
  return statementText(platform, text.replace(/\$(\d+)/g, '?'), text.match(/\$(\d+)/g)?.map((n) => values[Number(n.slice(1)) - 1]) ?? []);
}

/** `text`'s `?` bindings numbered as PostgreSQL's `$n`, outside quoted literals and identifiers. */
export function positional(text: string): string {
  // Quoted literals and identifiers are skipped; comments, E'' strings and dollar quotes are not read, so refused.
  if (/\?\?|\\\?|--|\/\*|\$\$|(^|[^\w])[Ee]'/.test(text)) throw new Error('a prepared statement holds no ??, \\?, comment, E\'\' string or $$');
  let n = 0;
  let out = '';
  let quote: string | null = null;
  for (const char of text) {
    if (quote !== null) {
      if (char === quote) quote = null;
      out += char;
    } else if (char === "'" || char === '"') {
      quote = char;
      out += char;
    } else out += char === '?' ? `$${++n}` : char;
  }
  return out;
}

/** Why an asked statement failed, as its caller is told: a connection error as the storage being unavailable. */
const failure = (error: unknown): unknown => (isConnectionError(error) ? new StorageUnavailableError({ cause: error }) : error);

/**
 * Runs one statement with `?` bindings and answers its rows, or `map` of them. The values are
 * escaped into the text (`statementText`: pg's escapeLiteral, as MikroORM's platform does, the
 * same text byte for byte), so values are never concatenated by hand elsewhere and a `?` inside a
 * value is never taken for a binding; the text is then sent as one simple-protocol query on a
 * connection of the ORM's own pool. MikroORM's `execute` (query builder, logging, result wrapping)
 * is skipped: it cost a read more than the driver does (see docs/benchmarks.md). The statement still
 * goes through knex's client: its `query` event (the counts in tests), its pool and the pool's
 * time-out; a connection whose statement timed out is discarded as the guard on knex's `_query`
 * does; under load a connection goes from one statement to the next waiting one without the pool
 * (`lease`). One promise per statement, whatever the load: the connection is leased and the
 * statement sent with callbacks, and `map` (a store's mapping of the rows) runs before it settles,
 * so a store that answers what `map` makes adds no promise of its own.
 */
export function runStatement<Row, T = Row[]>(orm: MikroORM, sql: string | Prepared, params: readonly unknown[], map?: (rows: Row[]) => T): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const connection = orm.em.getConnection();
    const text = typeof sql === 'string' ? statementText(connection.getPlatform(), sql, params) : sql.positional;
    const query = queryOf(sql, text, params, NAMED.has(orm));
    const client = connection.getKnex().client as unknown as KnexClient;
    const lane = laneOf(client);
    lease(client, lane, (leaseError, pooled) => {
      if (leaseError !== undefined) return reject(failure(leaseError));
      try {
        client.emit('query', { sql: text, bindings: typeof sql === 'string' ? [] : params });
      } catch (listenerError) {
        // A `query` listener that throws fails this statement, never strands its connection.
        giveBack(client, lane, pooled);
        return reject(listenerError);
      }
      (pooled as PgClient).query(query, (error, result) => {
        if (error !== null && error !== undefined) {
          discardIfTimedOut(pooled as PgConnection, error);
          if (isConnectionError(error)) outage(lane, error);
        } else lane.down = false;
        giveBack(client, lane, pooled);
        if (error !== null && error !== undefined) return reject(failure(error));
        if (map === undefined) return resolve(result.rows as T);
        try {
          resolve(map(result.rows as Row[]));
        } catch (mapError) {
          reject(mapError);
        }
      });
    });
  });
}

/** Sends one statement on a connection `onConnection` holds, and answers its rows. */
export type Send = <Row>(sql: string | Prepared, params: readonly unknown[]) => Promise<Row[]>;

/**
 * Runs `use` with one connection of the ORM's pool, held until it settles, each of its statements sent
 * on that connection as `runStatement` sends one (the same text, the same `query` event, the same
 * time-out and outage handling), without knex's query builder in between (a transaction's statements
 * are a turn's hot path: docs/benchmarks.md, turn).
 */
export function onConnection<T>(orm: MikroORM, use: (send: Send) => Promise<T>): Promise<T> {
  const connection = orm.em.getConnection();
  const platform = connection.getPlatform();
  const client = connection.getKnex().client as unknown as KnexClient;
  const lane = laneOf(client);
  const named = NAMED.has(orm);
  return new Promise<unknown>((resolve, reject) => lease(client, lane, (error, pooled) => (error === undefined ? resolve(pooled) : reject(failure(error)))))
    .then(async (pooled) => {
      const send: Send = <Row>(sql: string | Prepared, params: readonly unknown[]) => new Promise<Row[]>((resolve, reject) => {
        const text = typeof sql === 'string' ? statementText(platform, sql, params) : sql.positional;
        client.emit('query', { sql: text, bindings: typeof sql === 'string' ? [] : params });
        (pooled as PgClient).query(queryOf(sql, text, params, named), (error, result) => {
          if (error !== null && error !== undefined) {
            discardIfTimedOut(pooled as PgConnection, error);
            if (isConnectionError(error)) outage(lane, error);
            return reject(failure(error));
          }
          lane.down = false;
          resolve(result.rows as Row[]);
        });
      });
      try {
        return await use(send);
      } finally {
        giveBack(client, lane, pooled);
      }
    });
}

/** What `statementText` needs of MikroORM's platform: its quoting of any value but the plain ones. */
interface QuotingPlatform {
  quoteValue(value: unknown): string;
  quoteIdentifier(id: string): string;
  /** A value's literal (a string: pg's escapeLiteral), what `quoteValue` ends in for the plain kinds. */
  escape(value: unknown): string;
}

/** A string that pg's escapeLiteral would answer in plain quotes: no quote, no backslash. */
const PLAIN = /^[^'\\]*$/;

/**
 * One value as MikroORM's PostgreSQL platform quotes it in a statement's text, the common kinds
 * without its detour: a string with no quote or backslash in plain quotes (what escapeLiteral makes
 * of it, without building it a character at a time), a number, a boolean, null. Anything else
 * (an object as JSON, a Date, a Buffer, a list) is the platform's. Unlike the platform, a string
 * is always a value: never taken for one of MikroORM's raw SQL fragments by its text.
 */
function quote(platform: QuotingPlatform, value: unknown): string {
  switch (typeof value) {
    case 'string':
      return PLAIN.test(value) ? `'${value}'` : platform.escape(value);
    case 'number':
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return 'NULL';
    default:
      return value === null ? 'NULL' : platform.quoteValue(value);
  }
}

/**
 * A statement's text with its `?` bindings filled, as MikroORM's `formatQuery` does it (`??` an
 * identifier, `\?` a plain question mark), each value quoted by `quote`: the same text, byte for byte
 * (test/adapters/mikro-orm-statement-text.test.ts).
 */
export function statementText(platform: QuotingPlatform, sql: string, params: readonly unknown[]): string {
  if (params.length === 0) return sql;
  let j = 0;
  let pos = 0;
  let text = '';
  if (sql[0] === '?') {
    if (sql[1] === '?') {
      text += platform.quoteIdentifier(params[j++] as string);
      pos = 2;
    } else {
      text += quote(platform, params[j++]);
      pos = 1;
    }
  }
  while (pos < sql.length) {
    const at = sql.indexOf('?', pos + 1);
    if (at === -1) {
      text += sql.substring(pos, sql.length);
      break;
    }
    if (sql[at - 1] === '\\') {
      text += sql.substring(pos, at - 1) + '?';
      pos = at + 1;
    } else if (sql[at + 1] === '?') {
      text += sql.substring(pos, at) + platform.quoteIdentifier(params[j++] as string);
      pos = at + 2;
    } else {
      text += sql.substring(pos, at) + quote(platform, params[j++]);
      pos = at + 1;
    }
  }
  return text;
}

const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', '57P01', '57P02', '57P03']);

/** Whether an error means the database could not be reached, rather than a bad statement. */
export function isConnectionError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  // Class 08 is connection exceptions, but 08P01 (protocol violation) is what a bad value causes: not an outage.
  if (typeof code === 'string' && (CONNECTION_CODES.has(code) || (code.startsWith('08') && code !== '08P01'))) return true;
  // A Unix socket (the embedded database's) that is gone: its file was removed as it closed.
  if (code === 'ENOENT' && (error as { syscall?: unknown }).syscall === 'connect') return true;
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
