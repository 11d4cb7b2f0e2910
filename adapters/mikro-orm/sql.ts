import type { MikroORM } from '@mikro-orm/postgresql';
import type { Id, Page } from '../../domain/model.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import { StorageUnavailableError } from '../../ports/storage.ts';

/** What `select` needs of knex's client: its pool, and the statement call the time-out guard wraps. */
interface KnexClient {
  acquireConnection(): Promise<unknown>;
  releaseConnection(connection: unknown): Promise<unknown>;
  _query(connection: unknown, query: { sql: string }): Promise<{ response: { rows: unknown[] } }>;
  emit(event: 'query', query: { sql: string; bindings: readonly unknown[] }): boolean;
}

/**
 * Runs one statement with `?` bindings and answers its rows. The values are escaped into the text by
 * MikroORM's platform (pg's escapeLiteral; objects as JSON), as its own `execute` does, so values are
 * never concatenated by hand here and a `?` inside a value is never taken for a binding; the text is
 * then sent as one simple-protocol query on a connection of the ORM's own pool. `execute`'s query
 * builder, logging and result wrapping are skipped: they cost a read more than the driver does (see
 * docs/benchmarks.md). The statement still goes through knex's client: its `query` event (the counts in
 * tests), its pool's time-out, and the guard that discards a connection whose statement timed out.
 */
export async function runStatement<Row>(orm: MikroORM, sql: string, params: readonly unknown[]): Promise<Row[]> {
  const connection = orm.em.getConnection();
  const text = connection.getPlatform().formatQuery(sql, [...params]);
  const client = connection.getKnex().client as unknown as KnexClient;
  try {
    const pooled = await client.acquireConnection();
    try {
      client.emit('query', { sql: text, bindings: [] });
      return (await client._query(pooled, { sql: text })).response.rows as Row[];
    } finally {
      await client.releaseConnection(pooled);
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
