import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { QUEUE_LIMIT } from '../../domain/bounds.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { Message, MovedTo, Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { DirectiveAnswer, DirectiveOutcome, DirectiveWrite, DirectiveWrites, QueuedAnswer, StartedAnswer, SteeredAnswer } from '../../ports/directive-writes.ts';
import { EVENT_COLUMNS } from './event-log.ts';
import { enqueueIn } from './queue-edits.ts';
import { prepared, runStatement } from './sql.ts';
import { CONFLICT_ATTEMPTS, isConflict, transaction } from './transaction.ts';
import { inColumnOrder, isSeqRace, retriedOnSeqRace, SEQ_RACE_ATTEMPTS } from './write-helpers.ts';
import { openThreads } from './thread-openings.ts';

/** The directive's statements, prepared: a turn waits for each before its agent is prompted. */
const LOCK_THREAD = prepared('select key from threads where id = ? for no key update');
const LOCK_CONVERSATIONS = prepared(`select id, turn_running, turn_run_id, moved_to, session_id, (select count(*)::int from directive_queue where thread_id = ?) as waiting
  from conversations where thread_id = ? order by id for update`);
const CLAIM = prepared(`
          with claimed as (
            update conversations set turn_running = true, permission_mode = coalesce(?, permission_mode),
              turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
            where id = ?),
          said as (insert into messages (id, thread_id, role, text, artifact_id, created_at, origin) values (?, ?, 'user', ?, null, ?, ?::jsonb)),
          started as (insert into runs (id, conversation_id, directory, status, error, started_at, ended_at, message_id)
            values (?, ?, ?, 'running', null, ?, null, ?)),
          prompted as (insert into model_messages (id, run_id, role, content, created_at) values (?, ?, 'user', ?, ?)),
          last as (select coalesce(max(seq), 0) as seq from events where thread_id = ?)
          insert into events (thread_id, seq, type, at, data)
          select ?::uuid, seq + 1, 'message', now(), ?::jsonb from last
          union all select ?::uuid, seq + 2, 'run_started', now(), ?::jsonb from last
          returning ${EVENT_COLUMNS}`);

/**
 * Directives as one transaction each: the thread's row locked first, then its conversations (the
 * order moves lock them in), the checks, and every write; inside it every statement runs on its
 * connection with nothing else awaited (on the embedded socket, all connections share one session).
 */
export function mikroOrmDirectiveWrites(orm: MikroORM): DirectiveWrites {
  return {
    keptAnswer: async (threadId, messageId, author) => {
      const [first] = await runStatement<{ answer: DirectiveAnswer; author: string | null }>(orm,
        'select answer, author from directives where thread_id = ? and message_id = ?', [threadId, messageId]);
      if (first === undefined) return null;
      // A row from before authors were kept (null) is matched as it was then.
      return first.author !== null && first.author !== author ? { kind: 'message_id_taken' as const } : { kind: 'repeated' as const, answer: first.answer };
    },

    writeSteered: (write) => retriedOnSeqRace(() =>
      transaction(orm, async (sql) => {
        const messageId = uuidv7();
        const [thread] = await sql<{ key: string | null }>(LOCK_THREAD, [write.thread_id]);
        if (thread === undefined) throw new Error(`No thread ${write.thread_id}`);
        const answer: SteeredAnswer = { thread_id: write.thread_id, key: thread.key, conversation_id: write.conversation_id, run_id: write.run_id, steered: true };
        if (write.message_id !== null) {
          const inserted = await sql(`insert into directives (thread_id, message_id, answer, author) values (?, ?, ?::jsonb, ?)
            on conflict (thread_id, message_id) do nothing returning thread_id`, [write.thread_id, write.message_id, JSON.stringify(answer), write.author]);
          if (inserted.length === 0) {
            const [first] = await sql<{ answer: DirectiveAnswer; author: string | null }>(
              'select answer, author from directives where thread_id = ? and message_id = ?', [write.thread_id, write.message_id]);
            if (first!.author !== null && first!.author !== write.author) return { kind: 'message_id_taken' as const };
            return { kind: 'repeated' as const, answer: first!.answer };
          }
        }
        const message: Message = { id: messageId, role: 'user', text: write.text, artifact_id: null, created_at: uuid7Time(messageId), origin: null };
        const modelId = uuidv7();
        // The ledger message, the run's model message and the `steered` event in one statement.
        const [event] = await sql<WireEvent>(`
          with said as (insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'user', ?, null, ?)),
          prompted as (insert into model_messages (id, run_id, role, content, created_at) values (?, ?, 'user', ?, ?)),
          last as (select coalesce(max(seq), 0) as seq from events where thread_id = ?)
          insert into events (thread_id, seq, type, at, data)
          select ?::uuid, seq + 1, 'steered', now(), ?::jsonb from last
          returning ${EVENT_COLUMNS}`, [
          messageId, write.thread_id, write.text, message.created_at,
          modelId, write.run_id, write.text, uuid7Time(modelId),
          write.thread_id,
          write.thread_id, JSON.stringify({ run_id: write.run_id, message }),
        ]);
        return { kind: 'steered' as const, answer, message, event: event! };
      })),

    writeDirective: async (write) => (await startedAtOnce(orm, write)) ?? writeInTransaction(orm, write),

    openThreads: (openings) => openThreads(orm, openings),
  };
}

/** What `console_start_turn` answers (migration 0027). */
type AtOnce =
  | { readonly kind: 'other' }
  | { readonly kind: 'kept'; readonly answer: DirectiveAnswer; readonly author: string | null }
  | { readonly kind: 'started'; readonly key: string | null; readonly session_id: string | null; readonly events: WireEvent[] };

const START_TURN = prepared('select console_start_turn(?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb) as outcome');

/**
 * The common case in one round trip: a directive that starts a turn on an idle thread, decided and written by one
 * function of the database (migration 0027), under the same locks, in the same order, as the transaction below. It
 * answers null, having written nothing, for every other case (busy, queued, moved, changed, no such row), which the
 * transaction then decides.
 */
export async function startedAtOnce(orm: MikroORM, write: DirectiveWrite): Promise<DirectiveOutcome | null> {
  // Each kind of retry has its own budget, as in `retriedOnSeqRace` and `transaction`.
  let seqRaces = 0;
  let conflicts = 0;
  for (;;) {
    const messageId = uuidv7();
    const runId = uuidv7();
    const promptId = uuidv7();
    const origin = write.origin ?? null;
    const message: Message = { id: messageId, role: 'user', text: write.text, artifact_id: null, created_at: uuid7Time(messageId), origin };
    const run: Run = {
      id: runId, conversation_id: write.conversation_id, directory: write.directory, status: 'running', error: null,
      started_at: uuid7Time(runId), ended_at: null, rewound: false,
    };
    let outcome: AtOnce;
    try {
      [{ outcome }] = (await runStatement<{ outcome: AtOnce }>(orm, START_TURN, [
        write.thread_id, write.conversation_id, write.message_id, write.author, write.text,
        messageId, message.created_at, origin === null ? null : JSON.stringify(origin),
        runId, run.started_at, write.directory, write.permission_mode, write.lease.holder, write.lease.ms / 1000,
        promptId, uuid7Time(promptId), JSON.stringify({ run_id: runId, message }), JSON.stringify({ run_id: runId, conversation_id: write.conversation_id }),
      ])) as [{ outcome: AtOnce }];
    } catch (error) {
      // Two appenders took the same seq, or the database gave this one up for another: it wrote nothing; again.
      if (isSeqRace(error) && ++seqRaces < SEQ_RACE_ATTEMPTS) continue;
      if (isConflict(error) && ++conflicts < CONFLICT_ATTEMPTS) {
        // A short random pause, as `transaction` takes, so the two that met do not meet again.
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * conflicts));
        continue;
      }
      throw error;
    }
    if (outcome.kind === 'other') return null;
    if (outcome.kind === 'kept') {
      // A row from before authors were kept (null) is matched as it was then.
      return outcome.author !== null && outcome.author !== write.author ? { kind: 'message_id_taken' } : { kind: 'repeated', answer: outcome.answer };
    }
    const answer: StartedAnswer = { thread_id: write.thread_id, key: outcome.key, conversation_id: write.conversation_id, run_id: runId };
    // jsonb keeps an object's keys in its own order; a live frame is sent in the columns' order, as a replayed one is.
    const [event, runStarted] = outcome.events.map(inColumnOrder);
    return { kind: 'started', answer, message, run, event: event!, runStarted: runStarted!, sessionId: outcome.session_id };
  }
}

/** Any directive, as one transaction: the case `startedAtOnce` leaves to it, and every other. */
export function writeInTransaction(orm: MikroORM, write: DirectiveWrite): Promise<DirectiveOutcome> {
  return retriedOnSeqRace(() =>
      transaction<DirectiveOutcome>(orm, async (sql, rollback) => {
        // Both ids first (the answer names the run before anything is written), the message's first: it is older.
        const messageId = uuidv7();
        const runId = uuidv7();
        // The thread's row first, then its conversations, locked, as a move locks them (one order: no
        // deadlock): a concurrent directive, summon or teleport of this thread waits here until this
        // transaction ends, so the checks below and the claim are one decision. `no key update`: an event appended
        // meanwhile (its foreign key takes the row's key-share lock) does not wait on it, so it cannot deadlock with us.
        const [thread] = await sql<{ key: string | null }>(LOCK_THREAD, [write.thread_id]);
        if (thread === undefined) throw new Error(`No thread ${write.thread_id}`);
        const answer: StartedAnswer = { thread_id: write.thread_id, key: thread.key, conversation_id: write.conversation_id, run_id: runId };
        if (write.message_id !== null) {
          // A duplicate that waited on the thread's lock finds the first one's row (repeated); if that
          // one rolled back, it takes its place.
          const inserted = await sql(`insert into directives (thread_id, message_id, answer, author) values (?, ?, ?::jsonb, ?)
            on conflict (thread_id, message_id) do nothing returning thread_id`, [write.thread_id, write.message_id, JSON.stringify(answer), write.author]);
          if (inserted.length === 0) {
            const [first] = await sql<{ answer: DirectiveAnswer; author: string | null }>(
              'select answer, author from directives where thread_id = ? and message_id = ?', [write.thread_id, write.message_id]);
            // A row from before authors were kept (null) is matched as it was then.
            if (first!.author !== null && first!.author !== write.author) return { kind: 'message_id_taken' };
            return { kind: 'repeated', answer: first!.answer };
          }
        }
        // The queue's length read with them, in one statement: every write of the queue holds the thread's lock
        // (held here since the statement before), so no queue change can come between this statement's snapshot and its locks.
        const conversations = await sql<{ id: string; turn_running: boolean; turn_run_id: string | null; moved_to: MovedTo | null; session_id: string | null; waiting: number }>(
          LOCK_CONVERSATIONS, [write.thread_id, write.thread_id]);
        const target = conversations.find((c) => c.id === write.conversation_id);
        if (target === undefined) throw new Error(`No conversation ${write.conversation_id} on thread ${write.thread_id}`);
        // Refused: the directive row goes too, so a retry may start later.
        if (target.moved_to !== null) return rollback({ kind: 'moved_away', moved_to: target.moved_to });
        // The thread's, not the conversation's: a summon's turn runs on the conversation that replaced this one.
        const running = conversations.find((c) => c.turn_running);
        const waiting = target.waiting;
        if (running !== undefined || waiting > 0) {
          const whenBusy = write.when_busy ?? null;
          if (whenBusy === null) return rollback(running !== undefined ? { kind: 'busy' } : { kind: 'queue_not_empty' });
          if (conversations.at(-1)!.id !== target.id) return rollback({ kind: 'changed' });
          if (waiting >= QUEUE_LIMIT) return rollback({ kind: 'queue_full' });
          const first = whenBusy.mode === 'interrupt';
          const { item, event } = await enqueueIn(sql, {
            thread_id: write.thread_id, conversation_id: target.id, text: write.text, author: whenBusy.author, first,
            directory: write.directory, permission_mode: write.permission_mode, origin: write.origin ?? null,
          });
          const queued: QueuedAnswer = { thread_id: write.thread_id, key: thread.key, conversation_id: target.id, queued: { id: item.id, position: item.position } };
          if (write.message_id !== null) {
            await sql('update directives set answer = ?::jsonb where thread_id = ? and message_id = ?', [JSON.stringify(queued), write.thread_id, write.message_id]);
          }
          return { kind: 'queued', answer: queued, item, event, interrupts: first ? running?.turn_run_id ?? null : null };
        }
        if (conversations.at(-1)!.id !== target.id) return rollback({ kind: 'changed' });
        const message: Message = { id: messageId, role: 'user', text: write.text, artifact_id: null, created_at: uuid7Time(messageId), origin: write.origin ?? null };
        const run: Run = {
          id: runId, conversation_id: write.conversation_id, directory: write.directory, status: 'running', error: null,
          started_at: uuid7Time(runId), ended_at: null, rewound: false,
        };
        const promptId = uuidv7();
        // The claim, the user's message, the run, the prompt as its first model message, and its `message` and
        // `run_started` events (the next two seqs) in one statement: one round trip, not seven (a turn waits for each
        // before its agent is prompted; on the embedded database each is a statement of its one session).
        const events = await sql<WireEvent>(CLAIM, [
          write.permission_mode, runId, write.lease.holder, write.lease.ms / 1000, write.conversation_id,
          messageId, write.thread_id, write.text, message.created_at, message.origin === null ? null : JSON.stringify(message.origin),
          runId, write.conversation_id, write.directory, run.started_at, messageId,
          promptId, runId, write.text, uuid7Time(promptId),
          write.thread_id,
          write.thread_id, JSON.stringify({ run_id: runId, message }),
          write.thread_id, JSON.stringify({ run_id: runId, conversation_id: write.conversation_id }),
        ]);
        const [event, runStarted] = events.sort((a, b) => a.seq - b.seq);
        return { kind: 'started', answer, message, run, event: event!, runStarted: runStarted!, sessionId: target.session_id };
      }));
}
