import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { CONSOLE_CHANNEL, type Conversation, type Message, type ModelMessage, type MovedTo, type Pending, type Run, type Thread, type Worktree } from '../../domain/model.ts';
import { checkPendingAnswers } from '../../domain/pending-answers.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import { QUEUE_LIMIT } from '../../domain/bounds.ts';
import type { ConsoleWriter } from '../../ports/console-writer.ts';
import type { DirectiveAnswer, QueuedAnswer, StartedAnswer } from '../../ports/directive-writes.ts';
import type { NewConsoleThread } from '../../ports/console-threads.ts';
import { enqueueIn, mikroOrmQueueEdits } from './queue-edits.ts';
import { EVENT_COLUMNS } from './event-log.ts';
import { isUuid, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';
import { writeMove } from './move-writer.ts';
import { insertConversation, retriedOnSeqRace } from './write-helpers.ts';

import { CONVERSATION, PENDING_OF, RUN, THREAD } from './columns.ts';
import { mikroOrmTurnHandover } from './turn-handover.ts';
import { mikroOrmTurnLeases } from './turn-leases.ts';

/**
 * The console's writes. Each method is one transaction, or one statement where that suffices, and
 * inside a transaction every statement runs on its connection with nothing else awaited (on the
 * embedded socket, all connections share one session: waiting on another one would deadlock).
 */
export function mikroOrmConsoleWriter(orm: MikroORM): ConsoleWriter {
  return {
    findByKey: async (owner, key) =>
      (await runStatement<Thread>(orm, `select ${THREAD} from threads where owner = ? and key = ?`, [owner, key]))[0] ?? null,

    createConsoleThread: (input) => transaction(orm, (sql) => createConsoleThread(sql, input)),

    async setWorktree(threadId, worktree) {
      if (!isUuid(threadId)) return null;
      // One statement: the update when none is recorded, else the row as it is.
      const [row] = await runStatement<{ worktree: Worktree | null }>(orm, `
        with u as (update threads set worktree = ?::jsonb where id = ? and worktree is null returning worktree)
        select worktree from u union all select worktree from threads where id = ? and not exists (select 1 from u)`,
      [JSON.stringify(worktree), threadId, threadId]);
      return row?.worktree ?? null;
    },

    writeMove: (move) => writeMove(orm, move),

    writeDirective: (write) => retriedOnSeqRace(() =>
      transaction(orm, async (sql, rollback) => {
        // Both ids first (the answer names the run before anything is written), the message's first: it is older.
        const messageId = uuidv7();
        const runId = uuidv7();
        // The thread's row first, then its conversations, locked, as a move locks them (one order: no
        // deadlock): a concurrent directive, summon or teleport of this thread waits here until this
        // transaction ends, so the checks below and the claim are one decision.
        const [thread] = await sql<{ key: string | null }>('select key from threads where id = ? for update', [write.thread_id]);
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
          `select id, turn_running, turn_run_id, moved_to, session_id, (select count(*)::int from directive_queue where thread_id = ?) as waiting
           from conversations where thread_id = ? order by id for update`, [write.thread_id, write.thread_id]);
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
            directory: write.directory, permission_mode: write.permission_mode,
          });
          const queued: QueuedAnswer = { thread_id: write.thread_id, key: thread.key, conversation_id: target.id, queued: { id: item.id, position: item.position } };
          if (write.message_id !== null) {
            await sql('update directives set answer = ?::jsonb where thread_id = ? and message_id = ?', [JSON.stringify(queued), write.thread_id, write.message_id]);
          }
          return { kind: 'queued', answer: queued, item, event, interrupts: first ? running?.turn_run_id ?? null : null };
        }
        if (conversations.at(-1)!.id !== target.id) return rollback({ kind: 'changed' });
        const message: Message = { id: messageId, role: 'user', text: write.text, artifact_id: null, created_at: uuid7Time(messageId) };
        const run: Run = {
          id: runId, conversation_id: write.conversation_id, directory: write.directory, status: 'running', error: null,
          started_at: uuid7Time(runId), ended_at: null,
        };
        const promptId = uuidv7();
        // The claim, the user's message, the run, the prompt as its first model message, and its `message` and
        // `run_started` events (the next two seqs) in one statement: one round trip, not seven (a turn waits for each
        // before its agent is prompted; on the embedded database each is a statement of its one session).
        const events = await sql<WireEvent>(`
          with claimed as (
            update conversations set turn_running = true, permission_mode = coalesce(?, permission_mode),
              turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
            where id = ?),
          said as (insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'user', ?, null, ?)),
          started as (insert into runs (id, conversation_id, directory, status, error, started_at, ended_at)
            values (?, ?, ?, 'running', null, ?, null)),
          prompted as (insert into model_messages (id, run_id, role, content, created_at) values (?, ?, 'user', ?, ?)),
          last as (select coalesce(max(seq), 0) as seq from events where thread_id = ?)
          insert into events (thread_id, seq, type, at, data)
          select ?::uuid, seq + 1, 'message', now(), ?::jsonb from last
          union all select ?::uuid, seq + 2, 'run_started', now(), ?::jsonb from last
          returning ${EVENT_COLUMNS}`, [
          write.permission_mode, runId, write.lease.holder, write.lease.ms / 1000, write.conversation_id,
          messageId, write.thread_id, write.text, message.created_at,
          runId, write.conversation_id, write.directory, run.started_at,
          promptId, runId, write.text, uuid7Time(promptId),
          write.thread_id,
          write.thread_id, JSON.stringify({ run_id: runId, message }),
          write.thread_id, JSON.stringify({ run_id: runId, conversation_id: write.conversation_id }),
        ]);
        const [event, runStarted] = events.sort((a, b) => a.seq - b.seq);
        return { kind: 'started', answer, message, run, event: event!, runStarted: runStarted!, sessionId: target.session_id };
      })),

    async setPermissionMode(conversationId, mode) {
      if (!isUuid(conversationId)) return null;
      const [row] = await runStatement<Conversation>(orm,
        `update conversations set permission_mode = ? where id = ? returning ${CONVERSATION}`, [mode, conversationId]);
      return row ?? null;
    },

    async setSession(conversationId, sessionId) {
      if (isUuid(conversationId)) await runStatement(orm, 'update conversations set session_id = ? where id = ?', [sessionId, conversationId]);
    },

    async sessionOf(conversationId) {
      if (!isUuid(conversationId)) return null;
      return (await runStatement<{ session_id: string | null }>(orm, 'select session_id from conversations where id = ?', [conversationId]))[0]?.session_id ?? null;
    },

    async appendMessage(threadId, fields) {
      const id = uuidv7();
      const message: Message = { id, role: fields.role, text: fields.text, artifact_id: fields.artifact_id, created_at: uuid7Time(id) };
      await runStatement(orm, 'insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, ?, ?, ?, ?)',
        [id, threadId, message.role, message.text, message.artifact_id, message.created_at]);
      return message;
    },

    async appendModelMessage(runId, fields) {
      const id = uuidv7();
      const message: ModelMessage = { id, run_id: runId, role: fields.role, content: fields.content, created_at: uuid7Time(id) };
      await runStatement(orm, 'insert into model_messages (id, run_id, role, content, created_at) values (?, ?, ?, ?, ?)',
        [id, runId, message.role, message.content, message.created_at]);
      return message;
    },

    async addPending(fields) {
      const pending: Pending = { id: uuidv7(), ...fields };
      // Options as JSON text: an array bound as a value would be expanded into a list.
      await runStatement(orm, 'insert into pending (id, kind, conversation_id, run_id, title, options, tool_call) values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)',
        [pending.id, pending.kind, pending.conversation_id, pending.run_id, pending.title, JSON.stringify(pending.options),
          pending.tool_call === null ? null : JSON.stringify(pending.tool_call)]);
      return pending;
    },

    answerPending: (threadId, answers) =>
      transaction(orm, async (sql) => {
        const ids = [...new Set(answers.map((answer) => answer.id))].filter(isUuid);
        // Locked: of two concurrent answers to one item, the second waits, then finds it gone.
        const rows = ids.length === 0 || !isUuid(threadId) ? [] : await sql<Pending>(`
          select ${PENDING_OF('p')}
          from pending p join conversations c on c.id = p.conversation_id
          where c.thread_id = ? and p.id in (${ids.map(() => '?').join(', ')}) for update of p`, [threadId, ...ids]);
        const issues = checkPendingAnswers(new Map(rows.map((row) => [row.id, row])), answers);
        if (issues.length > 0) return { ok: false, issues };
        if (ids.length > 0) await sql(`delete from pending where id in (${ids.map(() => '?').join(', ')})`, ids);
        const runOf = new Map(rows.map((row) => [row.id, row.run_id]));
        for (const answer of answers) {
          const runId = runOf.get(answer.id);
          if (runId) await sql('insert into pending_answers (pending_id, run_id, answer) values (?, ?, ?::jsonb) on conflict do nothing', [answer.id, runId, JSON.stringify(answer)]);
        }
        return { ok: true };
      }),

    async pendingAnswers(pendingIds) {
      const ids = pendingIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await runStatement<{ answer: PendingAnswer }>(orm,
        `select answer from pending_answers where pending_id in (${ids.map(() => '?').join(', ')})`, ids);
      return rows.map((row) => row.answer);
    },

    async finishRun(runId, status, error) {
      // One statement, so one transaction: the run ends and its leftovers go together; an ended run stays as it is.
      const [run] = isUuid(runId) ? await runStatement<Run>(orm, `
        with r as (update runs set status = ?, error = ?, ended_at = now() where id = ? and status = 'running' returning *),
        p as (delete from pending where run_id = ? and exists (select 1 from r)),
        a as (delete from pending_answers where run_id = ? and exists (select 1 from r))
        select ${RUN} from r
        union all select ${RUN} from runs where id = ? and not exists (select 1 from r)`, [status, error, runId, runId, runId, runId]) : [];
      if (run === undefined) throw new Error(`No run ${runId}`);
      return run;
    },

    ...mikroOrmTurnLeases(orm),
    ...mikroOrmQueueEdits(orm),
    ...mikroOrmTurnHandover(orm),
  };
}

/** The race on the unique (owner, key) index: whoever inserts second waits, then answers the first's rows. */
async function createConsoleThread(sql: Statement, input: NewConsoleThread): Promise<{ thread: Thread; conversation: Conversation }> {
  const id = uuidv7();
  const [created] = await sql<Thread>(`
    insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
    values (?, ?, ?, ?, ?, ?, null, null, ?)
    on conflict (owner, key) where key is not null do nothing returning ${THREAD}`,
  [id, input.key, input.channel ?? CONSOLE_CHANNEL, input.owner, input.project, input.title, uuid7Time(id)]);
  // The existing row is locked, so two callers that both find it without a conversation add only one.
  const thread = created ?? (await sql<Thread>(`select ${THREAD} from threads where owner = ? and key = ? for update`, [input.owner, input.key]))[0]!;
  const [first] = created !== undefined ? [] : await sql<Conversation>(
    `select ${CONVERSATION} from conversations where thread_id = ? order by id limit 1`, [thread.id]);
  if (first !== undefined) return { thread, conversation: first };
  // A console conversation lives at its thread; a chat thread's where the message that opened it was posted.
  return { thread, conversation: await insertConversation(sql, thread, { ...input.conversation, address: input.conversation.address ?? null }) };
}
