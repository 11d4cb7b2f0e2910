import type { MikroORM } from '@mikro-orm/postgresql';
import type { WireEvent } from '../../domain/events.ts';
import type { EventLog } from '../../ports/event-log.ts';
import { iso, isUuid, prepared, runStatement } from './sql.ts';

export const EVENT_COLUMNS = `seq, type, thread_id, ${iso('at')} as at, data`;

/**
 * One statement: the thread's next seq is read and written together. `max(seq)` of one thread is
 * the last entry of the (thread_id, seq) key, so it costs one index probe however long the log.
 */
export const APPEND = `
insert into events (thread_id, seq, type, at, data)
select ?, coalesce(max(seq), 0) + 1, ?, now(), ?::jsonb from events where thread_id = ?
returning ${EVENT_COLUMNS}`;

/**
 * APPEND with the event's posts, as one statement: the event and its rows in `deliveries` are
 * written together or not at all (a data-modifying `with` is one statement, so one transaction).
 */
export const APPEND_WITH_POSTS = `
with event as (
  insert into events (thread_id, seq, type, at, data)
  select ?, coalesce(max(seq), 0) + 1, ?, now(), ?::jsonb from events where thread_id = ?
  returning seq, type, thread_id, at, data
), posted as (
  insert into deliveries (id, channel, place, new_thread, address, title, text, ask, recipient, attempts, due_at, holder)
  select p.id, p.channel, p.place, p.new_thread, p.address, p.title, p.text, p.ask, p."to", 0, now(), null
  from jsonb_to_recordset(?::jsonb) as p(id uuid, channel text, place text, new_thread boolean, address jsonb, title text, text text, ask jsonb, "to" text)
  where exists (select 1 from event)
  on conflict (id) do nothing
)
select ${EVENT_COLUMNS} from event`;

/**
 * APPEND_WITH_POSTS under a key (EventLog.append's `key`): the event and its posts are written only
 * when the thread holds no event under that key (`having`: the aggregate's one row is dropped, so
 * nothing is inserted); otherwise the statement answers the event stored under it. Two racing for one
 * key: the unique (thread_id, key) index refuses the second, which runs again and finds the first.
 */
export const APPEND_KEYED = `
with event as (
  insert into events (thread_id, seq, type, at, data, key)
  select ?, coalesce(max(seq), 0) + 1, ?, now(), ?::jsonb, ? from events where thread_id = ?
  having not exists (select 1 from events where thread_id = ? and key = ?)
  returning seq, type, thread_id, at, data
), posted as (
  insert into deliveries (id, channel, place, new_thread, address, title, text, ask, recipient, attempts, due_at, holder)
  select p.id, p.channel, p.place, p.new_thread, p.address, p.title, p.text, p.ask, p."to", 0, now(), null
  from jsonb_to_recordset(?::jsonb) as p(id uuid, channel text, place text, new_thread boolean, address jsonb, title text, text text, ask jsonb, "to" text)
  where exists (select 1 from event)
  on conflict (id) do nothing
)
select ${EVENT_COLUMNS} from event
union all
select ${EVENT_COLUMNS} from events where thread_id = ? and key = ? and not exists (select 1 from event)`;

const SINCE = `select ${EVENT_COLUMNS} from events where thread_id = ? and seq > ? order by seq limit ?`;

/** The last entry of the thread's key: one index probe, as for APPEND. */
const LAST_SEQ = 'select coalesce(max(seq), 0) as seq from events where thread_id = ?';

/** The appends as prepared statements: a turn appends one for each thing its agent does. */
const APPENDS = { plain: prepared(APPEND), withPosts: prepared(APPEND_WITH_POSTS), keyed: prepared(APPEND_KEYED) };

/** How often an append is tried before its conflict is taken for a bug (each retry means another append won). */
const MAX_ATTEMPTS = 50;

/**
 * The event log in the `events` table. Two appends racing for one thread (two instances, or two
 * pool connections) may read the same `max(seq)`: the primary key refuses the second insert, which
 * then runs again and reads the new maximum. Nothing is doubled, nothing lost; under read committed
 * the retried statement sees the winner, which has committed by the time the key refuses. An event
 * with posts is one statement with them (APPEND_WITH_POSTS): a refused one wrote no post either. A
 * keyed one (APPEND_KEYED) writes nothing when its key is stored, and answers the stored event.
 */
export function mikroOrmEventLog(orm: MikroORM): EventLog {
  return {
    async append(threadId, type, data, posts = [], key) {
      const [statement, params] = key !== undefined
        ? [APPENDS.keyed, [threadId, type, JSON.stringify(data), key, threadId, threadId, key, JSON.stringify(posts), threadId, key]]
        : posts.length === 0
          ? [APPENDS.plain, [threadId, type, JSON.stringify(data), threadId]]
          : [APPENDS.withPosts, [threadId, type, JSON.stringify(data), threadId, JSON.stringify(posts)]];
      for (let attempt = 1; ; attempt++) {
        try {
          const [event] = await runStatement<WireEvent>(orm, statement, params);
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
