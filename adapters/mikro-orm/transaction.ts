import type { MikroORM } from '@mikro-orm/postgresql';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { isConnectionError } from './sql.ts';

/** Runs one statement (`?` bindings, as `select` in sql.ts) inside the transaction and answers its rows. */
export type Statement = <Row = Record<string, unknown>>(sql: string, params: readonly unknown[]) => Promise<Row[]>;

/**
 * Thrown inside `transaction` to roll back and still answer a value: an expected outcome (busy)
 * whose writes so far must not stay.
 */
export class Rollback<T> {
  constructor(readonly value: T) {}
}

/**
 * Runs `work` in one transaction on one pooled connection; commits when it resolves, rolls back when
 * it throws. Every statement of `work` must go through `sql`: awaiting any other connection meanwhile
 * deadlocks the embedded socket, which serves all connections from one session.
 */
export async function transaction<T, R = never>(orm: MikroORM, work: (sql: Statement) => Promise<T>): Promise<T | R> {
  const connection = orm.em.getConnection();
  try {
    return await connection.transactional((trx) =>
      work((sql, params) => connection.execute(sql, [...params], 'all', trx)));
  } catch (error) {
    if (error instanceof Rollback) return error.value as R;
    throw isConnectionError(error) ? new StorageUnavailableError({ cause: error }) : error;
  }
}
