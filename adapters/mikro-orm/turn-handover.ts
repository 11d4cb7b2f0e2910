import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { WireEvent } from '../../domain/events.ts';
import type { Conversation, Message, MovedTo, Run, Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { QueuedDirective } from '../../ports/queue-edits.ts';
import type { DequeuedTurn, TurnHandover } from '../../ports/turn-handover.ts';
import type { TurnLease } from '../../ports/turn-leases.ts';
import { CONVERSATION, MESSAGE_OF, RUN, THREAD } from './columns.ts';
import { APPEND } from './event-log.ts';
import { ITEM } from './queue-edits.ts';
import { isUuid, prepared, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';
import { retriedOnSeqRace } from './write-helpers.ts';

/** The conversations of a thread as its writers lock them (after the thread's row), oldest first. */
type LockedConversation = { id: string; turn_running: boolean; turn_run_id: string | null; moved_to: MovedTo | null };
const LOCK_CONVERSATIONS = prepared('select id, turn_running, turn_run_id, moved_to from conversations where thread_id = ? order by id for update');
const lockConversations = (sql: Statement, threadId: string) => sql<LockedConversation>(LOCK_CONVERSATIONS, [threadId]);

/** A turn's hand-over, at the end of every turn: its statements prepared. */
const HANDOVER = {
  held: prepared('select thread_id from conversations where turn_run_id = ?'),
  lockThread: prepared(`select ${THREAD} from threads where id = ? for update`),
  release: prepared(`update conversations set turn_running = false, turn_run_id = null, turn_holder = null, turn_expires_at = null
          where turn_run_id = ?`),
  unsent: prepared('delete from unsent_prompts where run_id = ?'),
  next: prepared(`select ${ITEM}, directory, permission_mode from directive_queue where thread_id = ? order by ordinal limit 1`),
};

/**
 * Starts the thread's first queued directive on its latest conversation, inside a transaction that
 * holds the thread's lock and found no turn running: the row leaves the queue as its run, its claim
 * and its `dequeued` event are written, so it is started exactly once.
 */
async function startNextIn(sql: Statement, thread: Thread, conversations: readonly LockedConversation[], lease: TurnLease): Promise<DequeuedTurn | null> {
  const latest = conversations.at(-1);
  // A conversation moved away takes no turn here: the queue waits (moves are refused while it is not empty).
  if (latest === undefined || latest.moved_to !== null) return null;
  const [next] = await sql<QueuedDirective & { directory: string | null; permission_mode: string | null }>(
    HANDOVER.next, [thread.id]);
  if (next === undefined) return null;
  await sql('delete from directive_queue where id = ?', [next.id]);
  const runId = uuidv7();
  const run: Run = { id: runId, conversation_id: latest.id, directory: next.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null, rewound: false };
  await sql(`insert into runs (id, conversation_id, directory, status, error, started_at, ended_at, message_id) values (?, ?, ?, 'running', null, ?, null, ?)`,
    [runId, latest.id, run.directory, run.started_at, next.message_id]);
  const [conversation] = await sql<Conversation>(`
    update conversations set turn_running = true, permission_mode = coalesce(?, permission_mode),
      turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
    where id = ? returning ${CONVERSATION}`, [next.permission_mode, runId, lease.holder, lease.ms / 1000, latest.id]);
  const [message] = await sql<Message>(`select ${MESSAGE_OF('m')} from messages m where m.id = ?`, [next.message_id]);
  const stored = message ?? { id: next.message_id, role: 'user', text: next.text, artifact_id: null, created_at: uuid7Time(next.message_id), origin: next.origin };
  const item: QueuedDirective = { id: next.id, message_id: next.message_id, text: next.text, author: next.author, position: 1, created_at: next.created_at, origin: next.origin };
  const [event] = await sql<WireEvent>(APPEND, [thread.id, 'dequeued', JSON.stringify({ id: item.id, run_id: runId, conversation_id: latest.id, message: stored }), thread.id]);
  // Kept until the turn takes it to the agent: a crash before then leaves the run to be started again.
  const unsent: Unsent = { item, message: stored, event: event! };
  await sql('insert into unsent_prompts (run_id, thread_id, started) values (?, ?, ?::jsonb)', [runId, thread.id, JSON.stringify(unsent)]);
  return { thread, conversation: conversation!, run, ...unsent };
}

/** What `unsent_prompts.started` keeps of a dequeued turn: the rest (thread, conversation, run) is read as it is now. */
type Unsent = Pick<DequeuedTurn, 'item' | 'message' | 'event'>;

/**
 * Turns handed over to the queue in `directive_queue` and `unsent_prompts`: every write that starts
 * a queued directive is one transaction that takes the thread's row lock first, so an item starts once.
 */
export function mikroOrmTurnHandover(orm: MikroORM): TurnHandover {
  /** Under the thread's lock, with no turn running: starts its first queued directive. */
  const lockAndStart = (threadId: string, lease: TurnLease, release: string | null) => retriedOnSeqRace(() =>
    transaction(orm, async (sql): Promise<DequeuedTurn | null> => {
      const [thread] = await sql<Thread>(HANDOVER.lockThread, [threadId]);
      if (thread === undefined) return null;
      const conversations = await lockConversations(sql, threadId);
      if (release !== null) {
        // Only the turn's holder hands it over: one that finds it released (or handed over) already starts nothing.
        if (!conversations.some((c) => c.turn_run_id === release)) return null;
        await sql(HANDOVER.release, [release]);
        await sql(HANDOVER.unsent, [release]);
      }
      if (conversations.some((c) => c.turn_running && c.turn_run_id !== release)) return null;
      return startNextIn(sql, thread, conversations, lease);
    }));

  return {
    async handOverTurn(runId, lease) {
      if (!isUuid(runId)) return null;
      const [held] = await runStatement<{ thread_id: string }>(orm, HANDOVER.held, [runId]);
      // Not held by this run (any more): nothing to release, nothing to start.
      if (held === undefined) return null;
      return lockAndStart(held.thread_id, lease, runId);
    },

    async startIdleQueue(lease) {
      const [idle] = await runStatement<{ thread_id: string }>(orm, `
        select q.thread_id from directive_queue q
        where not exists (select 1 from conversations c where c.thread_id = q.thread_id and c.turn_running)
        order by q.ordinal limit 1`, []);
      return idle === undefined ? null : lockAndStart(idle.thread_id, lease, null);
    },

    async unsentTurn(runId) {
      if (!isUuid(runId)) return null;
      const [unsent] = await runStatement<{ thread_id: string; started: Unsent }>(orm, 'select thread_id, started from unsent_prompts where run_id = ?', [runId]);
      if (unsent === undefined) return null;
      const [run] = await runStatement<Run>(orm, `select ${RUN} from runs where id = ? and status = 'running'`, [runId]);
      if (run === undefined) return null;
      const [thread] = await runStatement<Thread>(orm, `select ${THREAD} from threads where id = ?`, [unsent.thread_id]);
      const [conversation] = await runStatement<Conversation>(orm, `select ${CONVERSATION} from conversations where id = ?`, [run.conversation_id]);
      if (thread === undefined || conversation === undefined) return null;
      const { item, message, event } = unsent.started;
      // One kept before origins were (migration 0026) has none: a person's, as every directive was then.
      return { thread, conversation, run, event, item: { ...item, origin: item.origin ?? null }, message: { ...message, origin: message.origin ?? null } };
    },

    async takeUnsentPrompt(runId, holder, directory) {
      if (!isUuid(runId)) return false;
      // One delete decides: a second taker (or one whose turn a sweep claimed meanwhile) deletes nothing.
      const id = uuidv7();
      const taken = await runStatement(orm, `
        with taken as (
          delete from unsent_prompts where run_id = ?
            and exists (select 1 from conversations where turn_run_id = ? and turn_holder = ?)
          returning run_id, started -> 'item' ->> 'text' as text),
        -- Run once whether or not the insert reads it (a data-modifying WITH always is): the run is where it runs now.
        moved as (update runs set directory = ? where id in (select run_id from taken))
        insert into model_messages (id, run_id, role, content, created_at) select ?, run_id, 'user', text, ? from taken returning id`,
      [runId, runId, holder, directory, id, uuid7Time(id)]);
      return taken.length === 1;
    },
  };
}
