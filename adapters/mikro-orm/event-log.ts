import type { MikroORM } from '@mikro-orm/postgresql';
import type { WireEvent } from '../../domain/events.ts';
import type { EventLog } from '../../ports/event-log.ts';
import { iso, isUuid, runStatement } from './sql.ts';

export const EVENT_COLUMNS = `seq, type, thread_id, ${iso('at')} as at, data`;

/**
 * One statement: the thread's next seq is read and written together. `max(seq)` of one thread is
 * the last entry of the (thread_id, seq) key, so it costs one index probe however long the log.
 */
export const APPEND = `
insert into events (thread_id, seq, type, at, data)
select ?, coalesce(max(seq), 0) + 1, ?, now(), ?::jsonb from events where thread_id = ?
returning ${EVENT_COLUMNS}`;

const SINCE = `select ${EVENT_COLUMNS} from events where thread_id = ? and seq > ? order by seq limit ?`;

/** The last entry of the thread's key: one index probe, as for APPEND. */
const LAST_SEQ = 'select coalesce(max(seq), 0) as seq from events where thread_id = ?';

/** How often an append is tried before its conflict is taken for a bug (each retry means another append won). */
const MAX_ATTEMPTS = 50;

/**
 * The event log in the `events` table. Two appends racing for one thread (two instances, or two
 * pool connections) may read the same `max(seq)`: the primary key refuses the second insert, which
 * then runs again and reads the new maximum. Nothing is doubled, nothing lost; under read committed
 * the retried statement sees the winner, which has committed by the time the key refuses.
 */
export function mikroOrmEventLog(orm: MikroORM): EventLog {
  return {
    async append(threadId, type, data) {
      for (let attempt = 1; ; attempt++) {
        try {
          const [event] = await runStatement<WireEvent>(orm, APPEND, [threadId, type, JSON.stringify(data), threadId]);
          return event!;
        } catch (error) {
          if ((error as { code?: unknown }).code !== '23505' || attempt >= MAX_ATTEMPTS) throw error;
        }
      }
    },

    async since(threadId, afterSeq, limit) {
      if (!isUuid(threadId) || limit <= 0) return [];
      return runStatement<WireEvent>(orm, SINCE, [threadId, Math.floor(afterSeq), Math.floor(limit)]);
    },

    async lastSeq(threadId) {
      if (!isUuid(threadId)) return 0;
      const [row] = await runStatement<{ seq: number }>(orm, LAST_SEQ, [threadId]);
      return row?.seq ?? 0;
    },
  };
}
