import type { WireEvent } from '../domain/events.ts';
import type { Conversation, Id, Message, Run, Thread } from '../domain/model.ts';
import type { TurnLease } from './turn-leases.ts';

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
}

/** Who edits or revokes a queued item: the item's author may, and the thread's owner. */
export interface QueueActor {
  readonly user: string;
  readonly owner: boolean;
}

/** A queued directive just taken to run: the turn it started, written with its removal from the queue. */
export interface DequeuedTurn {
  readonly thread: Thread;
  /** The conversation the turn runs on (its posture updated as the item asked). */
  readonly conversation: Conversation;
  readonly run: Run;
  readonly item: QueuedDirective;
  /** Its ledger message (written when it was queued). */
  readonly message: Message;
  /** The `dequeued` event, stored in the same transaction: publish it, then start the run. */
  readonly event: WireEvent;
}

/** An edit or a revocation: done (with what to publish), or refused. */
export type QueueChange<T> =
  | ({ readonly kind: 'done'; readonly events: readonly WireEvent[] } & T)
  /** The item already started, was revoked, or never was on this thread. */
  | { readonly kind: 'gone' }
  /** The caller is neither its author nor the thread's owner. */
  | { readonly kind: 'forbidden' };

/**
 * Queued directives as rows. Every write takes the thread's row lock first (as directives and moves
 * do), so a queued item is started, edited or revoked by exactly one of them: an item never runs
 * twice, never runs after it was revoked, and runs the text of the last edit that committed.
 * Queuing itself is `TurnWrites.writeDirective` with `when_busy`.
 */
export interface DirectiveQueue {
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
  /**
   * Ends the turn `runId` holds and hands the thread on, in one transaction under the thread's lock:
   * the turn is released, and when a directive is queued the first one is taken off the queue and its
   * turn started under `lease` (its run, the claim, its `dequeued` event), answered so the caller starts
   * it. "Turn ended" and "next started" are one write: a crash leaves either the old turn held (its
   * lease lapses, and the sweep hands over) or the new one started, its prompt kept unsent until the
   * turn takes it ({@link unsentTurn}). The released run's unsent prompt, if it still had one, goes. Answers null when nothing was
   * queued, or when the turn was no longer held by `runId` (another handed it over already).
   */
  handOverTurn(runId: Id, lease: TurnLease): Promise<DequeuedTurn | null>;
  /**
   * Starts the first queued directive of a thread where none runs (a queue left idle: a turn freed
   * without a hand-over), claimed under `lease`; null when there is none. Two sweepers never start the same one.
   */
  startIdleQueue(lease: TurnLease): Promise<DequeuedTurn | null>;
  /**
   * A dequeued directive's run whose prompt has not reached its agent yet: its turn, as the hand-over
   * that started it answered it (thread, conversation and run as they are now), so that a sweep that
   * finds its lease lapsed starts it again instead of failing it. Null for a run that is not one, whose
   * prompt was taken ({@link takeUnsentPrompt}), or whose turn was handed over or released since.
   */
  unsentTurn(runId: Id): Promise<DequeuedTurn | null>;
  /**
   * Takes a dequeued directive's prompt to send it to the agent, and records it as the run's `user`
   * model message in the same write: true for exactly one caller, and only while `holder` holds the
   * run's turn; from then on the run is never started again (a lapse fails it, as any turn whose agent
   * had it). False when it was taken already, or the turn is held elsewhere.
   */
  takeUnsentPrompt(runId: Id, holder: string): Promise<boolean>;
}
