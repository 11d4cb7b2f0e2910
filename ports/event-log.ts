import type { EventType, WireEvent } from '../domain/events.ts';
import type { Id } from '../domain/model.ts';
import type { Delivery } from './delivery-outbox.ts';

/** A thread's events, stored in order: the live socket's replay, and the source of every published event. */
export interface EventLog {
  /**
   * Stores an event with the thread's next `seq` (1 for its first) and answers it. Concurrent
   * appends to one thread (several service instances) each get their own `seq`: none is lost or doubled.
   * `posts` (a turn's reply, an ask, an end, for the chat place the thread's conversation lives at) go
   * into the delivery outbox in the same write, due now: the event and its posts are stored together
   * or not at all, so no crash between them loses a post and none is stored without its event. A post
   * whose id the outbox holds already is left as it is. Each post's id is a UUID.
   *
   * `key`, when given, names the append on the thread: an append under a key the thread holds already
   * stores nothing, posts nothing, and answers the event stored under it. A write retried because its
   * first try's outcome was unknown (committed, and its answer lost with the connection) finds the first
   * instead of storing the event, and its chat posts, twice.
   */
  append(threadId: Id, type: EventType, data: Readonly<Record<string, unknown>>, posts?: readonly Delivery[], key?: string): Promise<WireEvent>;
  /** The thread's events with `seq` greater than `afterSeq`, in order, at most `limit` of them. */
  since(threadId: Id, afterSeq: number, limit: number): Promise<WireEvent[]>;
  /** The thread's highest stored `seq`, 0 when it has none: where a reader without a cursor starts. */
  lastSeq(threadId: Id): Promise<number>;
}
