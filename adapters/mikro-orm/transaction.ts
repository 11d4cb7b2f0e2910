import type { MikroORM } from '@mikro-orm/postgresql';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { isConnectionError, onConnection, type Prepared } from './sql.ts';

/** Runs one statement (`?` bindings, as `runStatement` in sql.ts; or prepared) inside the transaction and answers its rows. */
export type Statement = <Row = Record<string, unknown>>(sql: string | Prepared, params: readonly unknown[]) => Promise<Row[]>;

/** Carries an answer out of a rolled-back transaction. */
class Rollback<T> {
  constructor(readonly answer: T) {}
}

/** How often a transaction is tried when PostgreSQL gives it up as a serialization failure or a deadlock victim. */
export const CONFLICT_ATTEMPTS = 5;

/**
 * A transaction PostgreSQL rolled back so that another could go on: a serialization failure
 * (40001) or the victim of a deadlock (40P01). It wrote nothing, and the same work may simply run again.
 */
export const isConflict = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code;
  return code === '40001' || code === '40P01';
};

/**
 * Runs `work` in one transaction on one pooled connection; commits when it resolves, rolls back when
 * it throws. `rollback(answer)` rolls back and answers `answer`: an expected outcome (busy) whose
 * writes so far must not stay. Every statement of `work` must go through `sql`: awaiting any other
 * connection meanwhile deadlocks the embedded socket, which serves all connections from one session.
 *
 * Writers take their locks in one order (a thread's row, then its conversations and runs), so they
 * do not deadlock one another; a conflict that still happens (with a statement outside that order, or
 * a stricter isolation level) is run again from the start, up to {@link CONFLICT_ATTEMPTS} times, after
 * a short random pause so the two that met do not meet again: never a 500 for a race.
 */
export async function transaction<T>(orm: MikroORM, work: (sql: Statement, rollback: (answer: T) => never) => Promise<T>): Promise<T> {
  const rollback = (answer: T): never => {
    throw new Rollback(answer);
  };
  for (let attempt = 1; ; attempt++) {
    try {
      return await onConnection(orm, async (send) => {
        await send('begin', []);
        try {
          const result = await work(send, rollback);
          await send('commit', []);
          return result;
        } catch (error) {
          // After a failed commit there is nothing to roll back (PostgreSQL only warns); a connection that
          // broke is not given back to be used (the server rolls back what it held as it goes).
          await send('rollback', []).catch(() => {});
          throw error;
        }
      });
    } catch (error) {
      if (error instanceof Rollback) return error.answer as T;
      if (isConflict(error) && attempt < CONFLICT_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
        continue;
      }
      throw isConnectionError(error) ? new StorageUnavailableError({ cause: error }) : error;
    }
  }
}
