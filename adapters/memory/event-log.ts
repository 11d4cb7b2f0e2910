import type { EventType, WireEvent } from '../../domain/events.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import type { EventLog } from '../../ports/event-log.ts';
import type { MemoryOutbox } from './delivery-outbox.ts';
import type { MemoryState } from './state.ts';
import { enqueueWebhookEvent } from './webhook-store.ts';
import { runIdOf, WEBHOOK_EVENT_OF } from '../../domain/webhooks.ts';

/**
 * Live events in memory: each thread's events are an array whose index is `seq - 1`, so `seq` is
 * the array's length after the push (appends cannot interleave on the one JavaScript thread). An
 * event's posts go into `outbox` in the same synchronous step, once everything is checked: both or neither.
 */
export function memoryEventLog(state: MemoryState, outbox: MemoryOutbox): EventLog {
  return {
    append: async (threadId, type, data, posts = [], key) => {
      const named = key === undefined ? null : `${threadId}\u0000${key}`;
      const first = named === null ? undefined : state.eventKeys.get(named);
      if (first !== undefined) return first;
      // As the database's uuid column does: a post without a UUID is refused, and nothing is written.
      for (const post of posts) if (!UUID_PATTERN.test(post.id)) throw new Error(`Not a delivery id: ${post.id}`);
      // Copied before the event is stored: a post that cannot be copied throws while nothing is written yet.
      const copies = posts.map((post) => structuredClone(post));
      const event = appendEvent(state, threadId, type, data);
      for (const post of copies) if (!state.deliveries.has(post.id)) outbox.enqueue(post);
      if (named !== null) state.eventKeys.set(named, event);
      return event;
    },

    async since(threadId, afterSeq, limit) {
      const events = state.events.get(threadId) ?? [];
      const from = Math.max(0, Math.floor(afterSeq));
      return events.slice(from, from + Math.max(0, limit));
    },

    async lastSeq(threadId) {
      return state.events.get(threadId)?.length ?? 0;
    },
  };
}

/** Stores an event with the thread's next seq, at once (no await: nothing can interleave). */
export function appendEvent(state: MemoryState, threadId: string, type: EventType, data: Readonly<Record<string, unknown>>): WireEvent {
  // As the database's foreign key does: events belong to a stored thread.
  if (!state.threads.has(threadId)) throw new Error(`No thread ${threadId}`);
  const events = state.events.get(threadId) ?? [];
  state.events.set(threadId, events);
  // A copy of the data, so a caller changing its object later cannot rewrite history.
  const event: WireEvent = { seq: events.length + 1, type, thread_id: threadId, at: new Date().toISOString(), data: structuredClone(data) };
  events.push(event);
  // In the same step: the event and its webhook deliveries are stored together (ports/webhook-store.ts).
  const hook = WEBHOOK_EVENT_OF[type];
  if (hook !== undefined && state.webhooks.webhooks.size > 0) {
    enqueueWebhookEvent(state.webhooks, state, { type: hook, thread_id: threadId, run_id: runIdOf(event.data), data: event.data, created_at: event.at });
  }
  return event;
}
