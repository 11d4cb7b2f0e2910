import type { WireEvent } from '../domain/events.ts';
import type { Conversation, Id, Message, Run, Thread } from '../domain/model.ts';
import type { QueuedDirective } from './queue-edits.ts';
import type { TurnLease } from './turn-leases.ts';

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

/**
 * A turn's end and the next one's start: the thread handed over to its first queued directive (or
 * started where a queue was left idle), and that directive's prompt kept unsent until its turn takes
 * it. Each write takes the thread's row lock first, as the queue's edits do, so a queued item starts
 * exactly once.
 */
export interface TurnHandover {
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
   * model message, and `directory` as the run's (where the taking instance runs it: the one stored when it was
   * queued is the queuing instance's), in the same write: true for exactly one caller, and only while `holder`
   * holds the run's turn; from then on the run is never started again (a lapse fails it, as any turn whose agent
   * had it). False when it was taken already, or the turn is held elsewhere.
   */
  takeUnsentPrompt(runId: Id, holder: string, directory: string): Promise<boolean>;
}
