import { uuidv7 } from 'uuidv7';
import { supersededData, type WireEvent } from '../../domain/events.ts';
import type { Message, Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { DequeuedTurn, DirectiveQueue, QueueActor, QueuedDirective } from '../../ports/directive-queue.ts';
import type { TurnLease } from '../../ports/turn-leases.ts';
import { appendEvent } from './event-log.ts';
import type { MemoryState } from './state.ts';

/** A queued directive as the memory state keeps it: the row, and what its turn needs later. */
export interface MemoryQueued {
  readonly id: string;
  readonly thread_id: string;
  readonly conversation_id: string;
  readonly message_id: string;
  text: string;
  readonly author: string;
  /** The order it runs in: an interrupt takes one below the smallest. */
  readonly ordinal: number;
  readonly directory: string | null;
  readonly permission_mode: string | null;
  readonly created_at: string;
}

/** A dequeued directive's turn whose prompt has not reached its agent: what starting it again needs. */
export interface MemoryUnsent {
  readonly thread_id: string;
  readonly item: QueuedDirective;
  readonly message: Message;
  readonly event: WireEvent;
}

/** A thread's queued directives, the next to run first. */
export const queueOf = (state: MemoryState, threadId: string): MemoryQueued[] =>
  [...state.queue.values()].filter((q) => q.thread_id === threadId).sort((a, b) => a.ordinal - b.ordinal);

const answered = (q: MemoryQueued, position: number): QueuedDirective => ({
  id: q.id, message_id: q.message_id, text: q.text, author: q.author, position, created_at: q.created_at,
});

/** Writes a queued directive with its ledger message and `queued` event (no await: atomic). */
export function enqueue(
  state: MemoryState,
  fields: { thread_id: string; conversation_id: string; text: string; author: string; first: boolean; directory: string | null; permission_mode: string | null },
): { item: QueuedDirective; message: Message; event: WireEvent } {
  const waiting = queueOf(state, fields.thread_id);
  const messageId = uuidv7();
  const message: Message = { id: messageId, role: 'user', text: fields.text, artifact_id: null, created_at: uuid7Time(messageId) };
  state.messages.set(messageId, { ...message, thread_id: fields.thread_id });
  const id = uuidv7();
  const ordinal = waiting.length === 0 ? 1 : fields.first ? waiting[0]!.ordinal - 1 : waiting.at(-1)!.ordinal + 1;
  const row: MemoryQueued = {
    id, thread_id: fields.thread_id, conversation_id: fields.conversation_id, message_id: messageId, text: fields.text, author: fields.author,
    ordinal, directory: fields.directory, permission_mode: fields.permission_mode, created_at: uuid7Time(id),
  };
  state.queue.set(id, row);
  const item = answered(row, fields.first ? 1 : waiting.length + 1);
  return { item, message, event: appendEvent(state, fields.thread_id, 'queued', { ...item }) };
}

/** The directive queue over the memory state; each method checks and writes without an `await` in between. */
export function memoryDirectiveQueue(state: MemoryState): DirectiveQueue {
  const running = (threadId: string) => [...state.conversations.values()].some((c) => c.thread_id === threadId && c.turn_running);

  /** Starts the thread's first queued directive on its latest conversation; the thread must be idle. */
  function startNext(threadId: string, lease: TurnLease): DequeuedTurn | null {
    const next = queueOf(state, threadId)[0];
    const thread = state.threads.get(threadId);
    const latest = [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
    // A conversation moved away takes no turn here: the queue waits (moves are refused while it is not empty).
    if (next === undefined || thread === undefined || latest === undefined || latest.moved_to !== null) return null;
    state.queue.delete(next.id);
    const runId = uuidv7();
    const run: Run = {
      id: runId, conversation_id: latest.id, directory: next.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null,
    };
    state.runs.set(runId, run);
    const conversation = { ...latest, permission_mode: next.permission_mode ?? latest.permission_mode, turn_running: true };
    state.conversations.set(conversation.id, conversation);
    state.turns.set(conversation.id, { run_id: runId, holder: lease.holder, expires: Date.now() + lease.ms });
    const stored = state.messages.get(next.message_id);
    const message: Message = stored === undefined
      ? { id: next.message_id, role: 'user', text: next.text, artifact_id: null, created_at: uuid7Time(next.message_id) }
      : { id: stored.id, role: stored.role, text: stored.text, artifact_id: stored.artifact_id, created_at: stored.created_at };
    const item = answered(next, 1);
    const event = appendEvent(state, threadId, 'dequeued', { id: item.id, run_id: runId, conversation_id: conversation.id, message });
    state.unsent.set(runId, { thread_id: threadId, item, message, event });
    return { thread, conversation, run, item, message, event };
  }

  /** The item, when it is still queued on the thread and the actor may change it. */
  function changeable(threadId: string, itemId: string, by: QueueActor): { kind: 'gone' } | { kind: 'forbidden' } | MemoryQueued {
    const item = state.queue.get(itemId);
    if (item === undefined || item.thread_id !== threadId) return { kind: 'gone' };
    if (!by.owner && item.author !== by.user) return { kind: 'forbidden' };
    return item;
  }

  return {
    queued: async (threadId) => queueOf(state, threadId).map((q, index) => answered(q, index + 1)),

    async editQueued(threadId, itemId, by, text) {
      const found = changeable(threadId, itemId, by);
      if ('kind' in found) return found;
      found.text = text;
      const message = state.messages.get(found.message_id);
      if (message !== undefined) state.messages.set(message.id, { ...message, text });
      const item = answered(found, queueOf(state, threadId).indexOf(found) + 1);
      const event = appendEvent(state, threadId, 'queued', { ...item });
      const events = state.events.get(threadId) ?? [];
      for (const [index, earlier] of events.entries()) {
        if (earlier.seq < event.seq && earlier.type === 'queued' && earlier.data.id === found.id && 'text' in earlier.data) {
          events[index] = { ...earlier, data: supersededData(earlier.data, event.seq) };
        }
      }
      return { kind: 'done', item, events: [event] };
    },

    async revokeQueued(threadId, itemId, by, line) {
      const found = changeable(threadId, itemId, by);
      if ('kind' in found) return found;
      state.queue.delete(found.id);
      const id = uuidv7();
      const message: Message = { id, role: 'system', text: line, artifact_id: null, created_at: uuid7Time(id) };
      state.messages.set(id, { ...message, thread_id: threadId });
      const events = [
        appendEvent(state, threadId, 'dequeued', { id: found.id, run_id: null, withdrawn: true }),
        appendEvent(state, threadId, 'message', { run_id: null, message }),
      ];
      return { kind: 'done', events };
    },

    async handOverTurn(runId, lease) {
      const held = [...state.turns].find(([, turn]) => turn.run_id === runId);
      if (held === undefined) return null;
      const [conversationId] = held;
      state.turns.delete(conversationId);
      state.unsent.delete(runId);
      const conversation = state.conversations.get(conversationId);
      if (conversation === undefined) return null;
      state.conversations.set(conversationId, { ...conversation, turn_running: false });
      return running(conversation.thread_id) ? null : startNext(conversation.thread_id, lease);
    },

    async startIdleQueue(lease) {
      for (const threadId of new Set([...state.queue.values()].map((q) => q.thread_id))) {
        if (running(threadId)) continue;
        const started = startNext(threadId, lease);
        if (started !== null) return started;
      }
      return null;
    },

    async unsentTurn(runId) {
      const unsent = state.unsent.get(runId);
      const run = state.runs.get(runId);
      const thread = unsent === undefined ? undefined : state.threads.get(unsent.thread_id);
      const conversation = run === undefined ? undefined : state.conversations.get(run.conversation_id);
      if (unsent === undefined || run?.status !== 'running' || thread === undefined || conversation === undefined) return null;
      return { thread, conversation, run, item: unsent.item, message: unsent.message, event: unsent.event };
    },

    async takeUnsentPrompt(runId, holder) {
      const held = [...state.turns.values()].some((turn) => turn.run_id === runId && turn.holder === holder);
      const unsent = state.unsent.get(runId);
      if (!held || unsent === undefined) return false;
      state.unsent.delete(runId);
      const id = uuidv7();
      state.modelMessages.set(id, { id, run_id: runId, role: 'user', content: unsent.item.text, created_at: uuid7Time(id) });
      return true;
    },
  };
}
