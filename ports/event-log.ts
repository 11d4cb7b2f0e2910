import type { EventType, WireEvent } from '../domain/events.ts';
import type { Id } from '../domain/model.ts';

/** A thread's events, stored in order: the live socket's replay, and the source of every published event. */
export interface EventLog {
  /**
   * Stores an event with the thread's next `seq` (1 for its first) and answers it. Concurrent
   * appends to one thread (several service instances) each get their own `seq`: none is lost or doubled.
   */
  append(threadId: Id, type: EventType, data: Readonly<Record<string, unknown>>): Promise<WireEvent>;
  /** The thread's events with `seq` greater than `afterSeq`, in order, at most `limit` of them. */
  since(threadId: Id, afterSeq: number, limit: number): Promise<WireEvent[]>;
  /** The thread's highest stored `seq`, 0 when it has none: where a reader without a cursor starts. */
  lastSeq(threadId: Id): Promise<number>;
}
