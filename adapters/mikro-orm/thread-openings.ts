import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { WireEvent } from '../../domain/events.ts';
import { CONSOLE_CHANNEL, type Conversation, type Message, type Run, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { OpenedThread, StartedAnswer, ThreadOpening } from '../../ports/directive-writes.ts';
import { CONVERSATION, THREAD } from './columns.ts';
import { EVENT_COLUMNS } from './event-log.ts';
import { inColumnOrder } from './write-helpers.ts';
import { isUuid, prepared, runStatement } from './sql.ts';

/**
 * Threads opened with their first turns, in one statement: each opening's thread (skipped when its owner has one
 * with that key, or the key is a thread's id: nothing else of it is written), its conversation written with the
 * turn claimed, the directive's answer under its `message_id`, the user's ledger message, the run, the prompt, and
 * the thread's first two events (`message`, `run_started`). Every row of an opening joins on its thread's insert,
 * so a skipped opening writes nothing; the statement is one write, so all the rest are written or none. The rows are
 * answered as json (`row_to_json`), which keeps the columns' order where jsonb would sort them.
 */
const OPEN = prepared(`with opening as (select * from unnest(
      ?::uuid[], ?::text[], ?::uuid[], ?::text[], ?::text[], ?::text[], ?::timestamptz[],
      ?::uuid[], ?::text[], ?::text[], ?::text[], ?::text[], ?::timestamptz[],
      ?::text[], ?::text[], ?::uuid[], ?::timestamptz[], ?::jsonb[],
      ?::uuid[], ?::timestamptz[], ?::text[], ?::uuid[], ?::timestamptz[],
      ?::jsonb[], ?::jsonb[], ?::jsonb[], ?::text[], ?::float8[], ?::text[])
    as o(thread_id, key, key_id, owner, project, title, thread_at,
      conversation_id, agent, model, permission_mode, effort, conversation_at,
      message_id, text, message, message_at, origin,
      run, run_at, directory, prompt, prompt_at,
      answer, message_event, started_event, holder, lease_seconds, channel)),
  opened as (insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
    select o.thread_id, o.key, o.channel, o.owner, o.project, o.title, null, null, o.thread_at from opening o
    where o.key_id is null or not exists (select 1 from threads t where t.id = o.key_id)
    on conflict (owner, key) where key is not null do nothing returning ${THREAD}),
  conversed as (insert into conversations (id, thread_id, agent, model, permission_mode, effort, address, turn_running, created_at,
      turn_run_id, turn_holder, turn_expires_at)
    select o.conversation_id, o.thread_id, o.agent, o.model, o.permission_mode, o.effort, jsonb_build_object('channel', o.channel, 'id', o.thread_id),
      true, o.conversation_at, o.run, o.holder, now() + make_interval(secs => o.lease_seconds)
    from opening o join opened t on t.id = o.thread_id returning ${CONVERSATION}),
  kept as (insert into directives (thread_id, message_id, answer, author)
    select o.thread_id, o.message_id, o.answer, o.owner from opening o join opened t on t.id = o.thread_id where o.message_id is not null),
  said as (insert into messages (id, thread_id, role, text, artifact_id, created_at, origin)
    select o.message, o.thread_id, 'user', o.text, null, o.message_at, o.origin from opening o join opened t on t.id = o.thread_id),
  started as (insert into runs (id, conversation_id, directory, status, error, started_at, ended_at, message_id)
    select o.run, o.conversation_id, o.directory, 'running', null, o.run_at, null, o.message from opening o join opened t on t.id = o.thread_id),
  prompted as (insert into model_messages (id, run_id, role, content, created_at)
    select o.prompt, o.run, 'user', o.text, o.prompt_at from opening o join opened t on t.id = o.thread_id),
  added as (insert into events (thread_id, seq, type, at, data)
    select o.thread_id, 1, 'message', now(), o.message_event from opening o join opened t on t.id = o.thread_id
    union all select o.thread_id, 2, 'run_started', now(), o.started_event from opening o join opened t on t.id = o.thread_id
    returning ${EVENT_COLUMNS})
  select t.id, row_to_json(t) as thread, row_to_json(c) as conversation,
    (select json_agg(e order by e.seq) from added e where e.thread_id = t.id) as events
  from opened t join conversed c on c.thread_id = t.id`);

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One opening's ids and rows as this side makes them, before the statement writes them. */
interface Planned {
  readonly opening: ThreadOpening;
  readonly threadId: string;
  readonly conversationId: string;
  readonly message: Message;
  readonly run: Run;
  readonly promptId: string;
  readonly answer: StartedAnswer;
}

/** `DirectiveWrites.openThreads` on MikroORM: one statement for the lot (OPEN). */
export async function openThreads(orm: MikroORM, openings: readonly ThreadOpening[]): Promise<(OpenedThread | null)[]> {
  if (openings.length === 0) return [];
  const planned: Planned[] = openings.map((opening) => {
    const threadId = uuidv7();
    const conversationId = uuidv7();
    const messageId = uuidv7();
    const runId = uuidv7();
    return {
      opening, threadId, conversationId, promptId: uuidv7(),
      message: { id: messageId, role: 'user', text: opening.text, artifact_id: null, created_at: uuid7Time(messageId), origin: opening.origin },
      run: { id: runId, conversation_id: conversationId, directory: opening.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null, rewound: false },
      answer: { thread_id: threadId, key: opening.thread.key, conversation_id: conversationId, run_id: runId },
    };
  });
  // Written in one order, by owner and key, whatever order they came in: two batches holding the same keys (instances
  // sending the same unfinished fires again) take the unique index's locks in the same order, and never deadlock.
  const ordered = [...planned].sort((a, b) => compare(a.opening.thread.owner, b.opening.thread.owner) || compare(a.opening.thread.key, b.opening.thread.key));
  const column = <T>(value: (p: Planned) => T): T[] => ordered.map(value);
  const rows = await runStatement<{ id: string; thread: Thread; conversation: Conversation; events: WireEvent[] }>(orm, OPEN, [
    column((p) => p.threadId), column((p) => p.opening.thread.key), column((p) => (isUuid(p.opening.thread.key) ? p.opening.thread.key : null)),
    column((p) => p.opening.thread.owner), column((p) => p.opening.thread.project), column((p) => p.opening.thread.title), column((p) => uuid7Time(p.threadId)),
    column((p) => p.conversationId), column((p) => p.opening.thread.conversation.agent), column((p) => p.opening.thread.conversation.model),
    column((p) => p.opening.thread.conversation.permission_mode), column((p) => p.opening.thread.conversation.effort), column((p) => uuid7Time(p.conversationId)),
    column((p) => p.opening.message_id), column((p) => p.opening.text), column((p) => p.message.id), column((p) => p.message.created_at),
    column((p) => (p.opening.origin === null ? null : JSON.stringify(p.opening.origin))),
    column((p) => p.run.id), column((p) => p.run.started_at), column((p) => p.opening.directory), column((p) => p.promptId), column((p) => uuid7Time(p.promptId)),
    column((p) => JSON.stringify(p.answer)), column((p) => JSON.stringify({ run_id: p.run.id, message: p.message })),
    column((p) => JSON.stringify({ run_id: p.run.id, conversation_id: p.conversationId })),
    column((p) => p.opening.lease.holder), column((p) => p.opening.lease.ms / 1000), column((p) => p.opening.thread.channel ?? CONSOLE_CHANNEL),
  ]);
  const byThread = new Map(rows.map((row) => [row.id, row]));
  return planned.map((p) => {
    const row = byThread.get(p.threadId);
    if (row === undefined) return null;
    const [event, runStarted] = row.events.map(inColumnOrder);
    return {
      thread: row.thread, conversation: row.conversation,
      started: { kind: 'started', answer: p.answer, message: p.message, run: p.run, event: event!, runStarted: runStarted!, sessionId: null },
    };
  });
}
