import type { WireEvent } from '../domain/events.ts';
import type { DirectiveOrigin, Id } from '../domain/model.ts';

/** A directive waiting for its thread's turn (contract section 7), as `GET /threads/{id}/queue` answers it. */
export interface QueuedDirective {
  readonly id: Id;
  /** The id of its ledger message, written when it was queued (edited with it). */
  readonly message_id: Id;
  readonly text: string;
  /** The user who queued it: they and the thread's owner may edit or revoke it. */
  readonly author: string;
  /** Its place in the queue now, from 1 (the next to run). */
  readonly position: number;
  readonly created_at: string;
  /** The schedule or hook that queued it, as its ledger message says; null: a person's directive. */
  readonly origin: DirectiveOrigin | null;
}

/** Who edits or revokes a queued item: the item's author may, and the thread's owner. */
export interface QueueActor {
  readonly user: string;
  readonly owner: boolean;
}

/** An edit or a revocation: done (with what to publish), or refused. */
export type QueueChange<T> =
  | ({ readonly kind: 'done'; readonly events: readonly WireEvent[] } & T)
  /** The item already started, was revoked, or never was on this thread. */
  | { readonly kind: 'gone' }
  /** The caller is neither its author nor the thread's owner. */
  | { readonly kind: 'forbidden' };

/**
 * The queue as people see and change it: its items, an edit, a revocation. Every write takes the
 * thread's row lock first (as directives, moves and hand-overs do), so a queued item is started,
 * edited or revoked by exactly one of them: an item never runs twice, never runs after it was
 * revoked, and runs the text of the last edit that committed. Queuing itself is
 * `DirectiveWrites.writeDirective` with `when_busy` (directive-writes.ts); starting an item is the
 * turn's hand-over (turn-handover.ts).
 */
export interface QueueEdits {
  /** The thread's queued directives, the next to run first. */
  queued(threadId: Id): Promise<QueuedDirective[]>;
  /**
   * Replaces a queued item's text, and its ledger message's; stores its `queued` event with the new
   * text, and in the same write takes the text out of the item's earlier `queued` events (each then
   * names the `seq` that replaced it in `superseded_by`): a replay carries the latest text of an item
   * once, however often it was edited, never every past version.
   */
  editQueued(threadId: Id, itemId: Id, by: QueueActor, text: string): Promise<QueueChange<{ readonly item: QueuedDirective }>>;
  /**
   * Removes a queued item: it never runs. Its ledger message stays, and `line` is added to the ledger
   * as a system message; stores a `dequeued` event (no run) and the line's `message` event.
   */
  revokeQueued(threadId: Id, itemId: Id, by: QueueActor, line: string): Promise<QueueChange<object>>;
}
