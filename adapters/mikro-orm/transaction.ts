import type { MikroORM } from '@mikro-orm/postgresql';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { isConnectionError } from './sql.ts';

/** Runs one statement (`?` bindings, as `runStatement` in sql.ts) inside the transaction and answers its rows. */
export type Statement = <Row = Record<string, unknown>>(sql: string, params: readonly unknown[]) => Promise<Row[]>;

/** Carries an answer out of a rolled-back transaction. */
class Rollback<T> {
  constructor(readonly answer: T) {}
}

/**
 * Runs `work` in one transaction on one pooled connection; commits when it resolves, rolls back when
 * it throws. `rollback(answer)` rolls back and answers `answer`: an expected outcome (busy) whose
 * writes so far must not stay. Every statement of `work` must go through `sql`: awaiting any other
 * connection meanwhile deadlocks the embedded socket, which serves all connections from one session.
 */
export async function transaction<T>(orm: MikroORM, work: (sql: Statement, rollback: (answer: T) => never) => Promise<T>): Promise<T> {
  const connection = orm.em.getConnection();
  const rollback = (answer: T): never => {
    throw new Rollback(answer);
  };
  try {
    return await connection.transactional((trx) =>
      work((sql, params) => connection.execute(sql, [...params], 'all', trx), rollback));
  } catch (error) {
    if (error instanceof Rollback) return error.answer as T;
    throw isConnectionError(error) ? new StorageUnavailableError({ cause: error }) : error;
  }
}
