import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { Conversation, Message, ModelMessage, Pending, Run, Thread } from '../../domain/model.ts';
import { checkPendingAnswers } from '../../domain/pending-answers.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import type { ConsoleWriter, DirectiveAnswer, ExpiredTurn, NewConsoleThread, NewConversation } from '../../ports/console-writer.ts';
import { APPEND } from './event-log.ts';
import { iso, isUuid, select } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';

const THREAD = `id, key, channel, owner, project, title, fork_of, fork_cutoff, ${iso('created_at')} as created_at`;
const CONVERSATION = `id, thread_id, agent, model, permission_mode, effort, address, turn_running, ${iso('created_at')} as created_at`;
const RUN = `id, conversation_id, directory, status, error, ${iso('started_at')} as started_at, ${iso('ended_at')} as ended_at`;

/**
 * The console's writes. Each method is one transaction, or one statement where that suffices, and
 * inside a transaction every statement runs on its connection with nothing else awaited (on the
 * embedded socket, all connections share one session: waiting on another one would deadlock).
 */
export function mikroOrmConsoleWriter(orm: MikroORM): ConsoleWriter {
  return {
    findByKey: async (owner, key) =>
      (await select<Thread>(orm, `select ${THREAD} from threads where owner = ? and key = ?`, [owner, key]))[0] ?? null,

    createConsoleThread: (input) => transaction(orm, (sql) => createConsoleThread(sql, input)),

    writeMove: (move) => retriedOnSeqRace(() =>
      transaction(orm, async (sql) => {
        // The source's row, then its conversations, locked: a concurrent move waits, and a directive's
        // claim on one of its conversations waits too, so the busy check below holds until commit.
        const [source] = await sql<Thread>(`select ${THREAD} from threads where id = ? for update`, [move.source_thread_id]);
        if (source === undefined) throw new Error(`No thread ${move.source_thread_id}`);
        const running = await sql<{ turn_running: boolean }>('select turn_running from conversations where thread_id = ? for update', [source.id]);
        const pending = await sql<{ kind: string; n: number }>(`
          select p.kind, count(*)::int as n from pending p join conversations c on c.id = p.conversation_id
          where c.thread_id = ? group by p.kind`, [source.id]);
        const busy = {
          turnRunning: running.some((row) => row.turn_running),
          approvals: pending.find((row) => row.kind === 'approval')?.n ?? 0,
          questions: pending.find((row) => row.kind === 'question')?.n ?? 0,
        };
        if (busy.turnRunning || busy.approvals > 0 || busy.questions > 0) return { kind: 'busy', busy };
        let thread = source;
        if (move.landing !== null) {
          const l = move.landing;
          [thread] = await sql<Thread>(`
            insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
            values (?, null, ?, ?, ?, ?, null, null, ?) returning ${THREAD}`,
          [l.id, l.channel, l.owner, l.project, l.title, uuid7Time(l.id)]) as [Thread];
        }
        let conversation = await insertConversation(sql, thread, move.conversation, move.conversation.id);
        if (move.ledger !== null) {
          const id = uuidv7();
          await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'system', ?, null, ?)`,
            [id, source.id, move.ledger, uuid7Time(id)]);
        }
        const gateway = JSON.stringify(move.gateway);
        const events = await sql<WireEvent>(APPEND, [source.id, 'gateway', gateway, source.id]);
        if (move.landing !== null) events.push(...await sql<WireEvent>(APPEND, [thread.id, 'gateway', gateway, thread.id]));
        let run: Run | null = null;
        if (move.turn !== null) {
          const messageId = uuidv7();
          const runId = uuidv7();
          const message: Message = { id: messageId, role: 'user', text: move.turn.text, artifact_id: null, created_at: uuid7Time(messageId) };
          run = { id: runId, conversation_id: conversation.id, directory: move.turn.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null };
          await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'user', ?, null, ?)`,
            [messageId, thread.id, message.text, message.created_at]);
          await sql(`insert into runs (id, conversation_id, directory, status, error, started_at, ended_at) values (?, ?, ?, 'running', null, ?, null)`,
            [runId, conversation.id, run.directory, run.started_at]);
          [conversation] = await sql<Conversation>(`
            update conversations set turn_running = true, turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
            where id = ? returning ${CONVERSATION}`, [runId, move.turn.lease.holder, move.turn.lease.ms / 1000, conversation.id]) as [Conversation];
          events.push(...await sql<WireEvent>(APPEND, [thread.id, 'message', JSON.stringify({ run_id: runId, message }), thread.id]));
        }
        return { kind: 'moved', thread, conversation, events, run };
      })),

    writeDirective: (write) => retriedOnSeqRace(() =>
      transaction(orm, async (sql, rollback) => {
        // Both ids first (the answer names the run before anything is written), the message's first: it is older.
        const messageId = uuidv7();
        const runId = uuidv7();
        if (write.message_id !== null) {
          // The key (thread_id, message_id) is the lock: a concurrent duplicate waits here until this
          // transaction ends, then finds the row (repeated) or, if this one rolled back, takes its place.
          const inserted = await sql(`
            insert into directives (thread_id, message_id, answer)
            select t.id, ?, jsonb_build_object('thread_id', t.id, 'key', t.key, 'conversation_id', ?::uuid, 'run_id', ?::uuid)
            from threads t where t.id = ?
            on conflict (thread_id, message_id) do nothing returning thread_id`,
          [write.message_id, write.conversation_id, runId, write.thread_id]);
          if (inserted.length === 0) {
            const [first] = await sql<{ answer: DirectiveAnswer }>(
              'select answer from directives where thread_id = ? and message_id = ?', [write.thread_id, write.message_id]);
            if (first === undefined) throw new Error(`No thread ${write.thread_id}`);
            return { kind: 'repeated', answer: first.answer };
          }
        }
        // Claims the turn: a concurrent directive on the same conversation waits for this row's lock,
        // then sees turn_running and is busy; select-then-update would let both start.
        const [claimed] = await sql<{ key: string | null }>(`
          update conversations c set turn_running = true, permission_mode = coalesce(?, c.permission_mode),
            turn_run_id = ?, turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
          from threads t where t.id = c.thread_id and c.id = ? and c.thread_id = ? and not c.turn_running
          returning t.key`, [write.permission_mode, runId, write.lease.holder, write.lease.ms / 1000, write.conversation_id, write.thread_id]);
        if (claimed === undefined) {
          const exists = await sql('select 1 from conversations where id = ? and thread_id = ?', [write.conversation_id, write.thread_id]);
          if (exists.length === 0) throw new Error(`No conversation ${write.conversation_id} on thread ${write.thread_id}`);
          return rollback({ kind: 'busy' }); // the directive row goes too: a retry may start later
        }
        const message: Message = { id: messageId, role: 'user', text: write.text, artifact_id: null, created_at: uuid7Time(messageId) };
        const run: Run = {
          id: runId, conversation_id: write.conversation_id, directory: write.directory, status: 'running', error: null,
          started_at: uuid7Time(runId), ended_at: null,
        };
        await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'user', ?, null, ?)`,
          [messageId, write.thread_id, write.text, message.created_at]);
        await sql(`insert into runs (id, conversation_id, directory, status, error, started_at, ended_at)
          values (?, ?, ?, 'running', null, ?, null)`, [runId, write.conversation_id, write.directory, run.started_at]);
        const answer: DirectiveAnswer = { thread_id: write.thread_id, key: claimed.key, conversation_id: write.conversation_id, run_id: runId };
        const [event] = await sql<WireEvent>(APPEND, [write.thread_id, 'message', JSON.stringify({ run_id: runId, message }), write.thread_id]);
        return { kind: 'started', answer, message, run, event: event! };
      })),

    async setPermissionMode(conversationId, mode) {
      if (!isUuid(conversationId)) return null;
      const [row] = await select<Conversation>(orm,
        `update conversations set permission_mode = ? where id = ? returning ${CONVERSATION}`, [mode, conversationId]);
      return row ?? null;
    },

    async setSession(conversationId, sessionId) {
      if (isUuid(conversationId)) await select(orm, 'update conversations set session_id = ? where id = ?', [sessionId, conversationId]);
    },

    async sessionOf(conversationId) {
      if (!isUuid(conversationId)) return null;
      return (await select<{ session_id: string | null }>(orm, 'select session_id from conversations where id = ?', [conversationId]))[0]?.session_id ?? null;
    },

    async appendMessage(threadId, fields) {
      const id = uuidv7();
      const message: Message = { id, role: fields.role, text: fields.text, artifact_id: fields.artifact_id, created_at: uuid7Time(id) };
      await select(orm, 'insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, ?, ?, ?, ?)',
        [id, threadId, message.role, message.text, message.artifact_id, message.created_at]);
      return message;
    },

    async appendModelMessage(runId, fields) {
      const id = uuidv7();
      const message: ModelMessage = { id, run_id: runId, role: fields.role, content: fields.content, created_at: uuid7Time(id) };
      await select(orm, 'insert into model_messages (id, run_id, role, content, created_at) values (?, ?, ?, ?, ?)',
        [id, runId, message.role, message.content, message.created_at]);
      return message;
    },

    async addPending(fields) {
      const pending: Pending = { id: uuidv7(), ...fields };
      // Options as JSON text: an array bound as a value would be expanded into a list.
      await select(orm, 'insert into pending (id, kind, conversation_id, run_id, title, options, tool_call) values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)',
        [pending.id, pending.kind, pending.conversation_id, pending.run_id, pending.title, JSON.stringify(pending.options),
          pending.tool_call === null ? null : JSON.stringify(pending.tool_call)]);
      return pending;
    },

    answerPending: (threadId, answers) =>
      transaction(orm, async (sql) => {
        const ids = [...new Set(answers.map((answer) => answer.id))].filter(isUuid);
        // Locked: of two concurrent answers to one item, the second waits, then finds it gone.
        const rows = ids.length === 0 || !isUuid(threadId) ? [] : await sql<Pending>(`
          select p.id, p.kind, p.conversation_id, p.run_id, p.title, p.options, p.tool_call
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
      const rows = await select<{ answer: PendingAnswer }>(orm,
        `select answer from pending_answers where pending_id in (${ids.map(() => '?').join(', ')})`, ids);
      return rows.map((row) => row.answer);
    },

    async finishRun(runId, status, error) {
      // One statement, so one transaction: the run ends and its leftovers go together; an ended run stays as it is.
      const [run] = isUuid(runId) ? await select<Run>(orm, `
        with r as (update runs set status = ?, error = ?, ended_at = now() where id = ? and status = 'running' returning *),
        p as (delete from pending where run_id = ? and exists (select 1 from r)),
        a as (delete from pending_answers where run_id = ? and exists (select 1 from r))
        select ${RUN} from r
        union all select ${RUN} from runs where id = ? and not exists (select 1 from r)`, [status, error, runId, runId, runId, runId]) : [];
      if (run === undefined) throw new Error(`No run ${runId}`);
      return run;
    },

    async releaseTurn(runId) {
      if (!isUuid(runId)) return;
      await select(orm, `update conversations set turn_running = false, turn_run_id = null, turn_holder = null, turn_expires_at = null
        where turn_run_id = ?`, [runId]);
    },

    async renewTurns(holder, runIds, ms) {
      const ids = runIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await select<{ turn_run_id: string }>(orm, `
        update conversations set turn_expires_at = now() + make_interval(secs => ?)
        where turn_running and turn_holder = ? and turn_run_id in (${ids.map(() => '?').join(', ')}) returning turn_run_id`,
      [ms / 1000, holder, ...ids]);
      return rows.map((row) => row.turn_run_id);
    },

    async claimExpiredTurn(lease): Promise<ExpiredTurn | null> {
      for (;;) {
        // Skip locked: two sweepers never wait on, or take, the same turn. A turn with no lease (left by an
        // earlier version, or a directive whose run was never written) counts as lapsed.
        const [claimed] = await select<{ thread_id: string; run_id: string | null; conversation_id: string }>(orm, `
          with expired as (
            select id from conversations
            where turn_running and (turn_expires_at is null or turn_expires_at < now())
            order by turn_expires_at nulls first limit 1 for update skip locked)
          update conversations c set turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
          from expired where c.id = expired.id
          returning c.thread_id, c.turn_run_id as run_id, c.id as conversation_id`, [lease.holder, lease.ms / 1000]);
        if (claimed === undefined) return null;
        // A turn claimed before leases existed names no run: its conversation's latest running run is the one.
        const [run] = await select<Run>(orm, claimed.run_id !== null
          ? `select ${RUN} from runs where id = ?`
          : `select ${RUN} from runs where conversation_id = ? order by (status = 'running') desc, id desc limit 1`,
        [claimed.run_id ?? claimed.conversation_id]);
        if (run === undefined) {
          // Nothing to end: the turn is simply freed, and the next lapsed one looked for.
          await select(orm, `update conversations set turn_running = false, turn_run_id = null, turn_holder = null, turn_expires_at = null where id = ?`, [claimed.conversation_id]);
          continue;
        }
        if (claimed.run_id === null) await select(orm, 'update conversations set turn_run_id = ? where id = ?', [run.id, claimed.conversation_id]);
        return { thread_id: claimed.thread_id, run };
      }
    },

    async runningTurn(threadId) {
      if (!isUuid(threadId)) return null;
      const [turn] = await select<{ run_id: string; conversation_id: string; holder: string | null }>(orm, `
        select turn_run_id as run_id, id as conversation_id, turn_holder as holder from conversations
        where thread_id = ? and turn_running and turn_run_id is not null order by id desc limit 1`, [threadId]);
      return turn ?? null;
    },
  };
}

/**
 * A directive's event takes the thread's next seq inside the transaction; an append racing it from
 * another connection may take that seq first, and the key then refuses this transaction as a whole.
 * It is run again, from the start: it wrote nothing.
 */
async function retriedOnSeqRace<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const constraint = (error as { constraint?: unknown }).constraint;
      if ((error as { code?: unknown }).code !== '23505' || constraint !== 'events_pkey' || attempt >= 20) throw error;
    }
  }
}

/** The race on the unique (owner, key) index: whoever inserts second waits, then answers the first's rows. */
async function createConsoleThread(sql: Statement, input: NewConsoleThread): Promise<{ thread: Thread; conversation: Conversation }> {
  const id = uuidv7();
  const [created] = await sql<Thread>(`
    insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
    values (?, ?, 'console', ?, ?, ?, null, null, ?)
    on conflict (owner, key) where key is not null do nothing returning ${THREAD}`,
  [id, input.key, input.owner, input.project, input.title, uuid7Time(id)]);
  // The existing row is locked, so two callers that both find it without a conversation add only one.
  const thread = created ?? (await sql<Thread>(`select ${THREAD} from threads where owner = ? and key = ? for update`, [input.owner, input.key]))[0]!;
  const [first] = created !== undefined ? [] : await sql<Conversation>(
    `select ${CONVERSATION} from conversations where thread_id = ? order by id limit 1`, [thread.id]);
  if (first !== undefined) return { thread, conversation: first };
  const conversationId = uuidv7();
  const c = input.conversation;
  const [conversation] = await sql<Conversation>(`
    insert into conversations (id, thread_id, agent, model, permission_mode, effort, address, turn_running, created_at)
    values (?, ?, ?, ?, ?, ?, ?::jsonb, false, ?) returning ${CONVERSATION}`,
  [conversationId, thread.id, c.agent, c.model, c.permission_mode, c.effort,
    JSON.stringify({ channel: 'console', id: thread.id }), uuid7Time(conversationId)]);
  return { thread, conversation: conversation! };
}

/** Writes a conversation; its address defaults to the thread itself on the thread's channel. */
async function insertConversation(sql: Statement, thread: Thread, c: NewConversation, id: string = uuidv7()): Promise<Conversation> {
  const [conversation] = await sql<Conversation>(`
    insert into conversations (id, thread_id, agent, model, permission_mode, effort, address, turn_running, created_at)
    values (?, ?, ?, ?, ?, ?, ?::jsonb, false, ?) returning ${CONVERSATION}`,
  [id, thread.id, c.agent, c.model, c.permission_mode, c.effort, JSON.stringify(c.address ?? { channel: thread.channel, id: thread.id }), uuid7Time(id)]);
  return conversation!;
}
