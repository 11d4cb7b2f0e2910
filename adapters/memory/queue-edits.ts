import { uuidv7 } from 'uuidv7';
import { supersededData, type WireEvent } from '../../domain/events.ts';
import type { DirectiveOrigin, Message } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { QueueActor, QueueEdits, QueuedDirective } from '../../ports/queue-edits.ts';
import { appendEvent } from './event-log.ts';
import type { MemoryQueued, MemoryState } from './state.ts';

/** A thread's queued directives, the next to run first. */
export const queueOf = (state: MemoryState, threadId: string): MemoryQueued[] =>
  [...state.queue.values()].filter((q) => q.thread_id === threadId).sort((a, b) => a.ordinal - b.ordinal);

/** A queued row as the queue answers it, at `position`. */
export const answered = (q: MemoryQueued, position: number): QueuedDirective => ({
  id: q.id, message_id: q.message_id, text: q.text, author: q.author, position, created_at: q.created_at, origin: q.origin,
});

/** Writes a queued directive with its ledger message and `queued` event (no await: atomic). */
export function enqueue(
  state: MemoryState,
  fields: {
    thread_id: string; conversation_id: string; text: string; author: string; first: boolean; directory: string | null; permission_mode: string | null; origin: DirectiveOrigin | null;
  },
): { item: QueuedDirective; message: Message; event: WireEvent } {
  const waiting = queueOf(state, fields.thread_id);
  const messageId = uuidv7();
  const message: Message = { id: messageId, role: 'user', text: fields.text, artifact_id: null, created_at: uuid7Time(messageId), origin: fields.origin };
  state.messages.set(messageId, { ...message, thread_id: fields.thread_id });
  const id = uuidv7();
  const ordinal = waiting.length === 0 ? 1 : fields.first ? waiting[0]!.ordinal - 1 : waiting.at(-1)!.ordinal + 1;
  const row: MemoryQueued = {
    id, thread_id: fields.thread_id, conversation_id: fields.conversation_id, message_id: messageId, text: fields.text, author: fields.author,
    ordinal, directory: fields.directory, permission_mode: fields.permission_mode, created_at: uuid7Time(id), origin: fields.origin,
  };
  state.queue.set(id, row);
  const item = answered(row, fields.first ? 1 : waiting.length + 1);
  return { item, message, event: appendEvent(state, fields.thread_id, 'queued', { ...item }) };
}

/** The queue's edits over the memory state; each method checks and writes without an `await` in between. */
export function memoryQueueEdits(state: MemoryState): QueueEdits {
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
      const message: Message = { id, role: 'system', text: line, artifact_id: null, created_at: uuid7Time(id), origin: null };
      state.messages.set(id, { ...message, thread_id: threadId });
      const events = [
        appendEvent(state, threadId, 'dequeued', { id: found.id, run_id: null, withdrawn: true }),
        appendEvent(state, threadId, 'message', { run_id: null, message }),
      ];
      return { kind: 'done', events };
    },
  };
}
