import type { ConsoleThreads } from './console-threads.ts';
import type { DirectiveQueue } from './directive-queue.ts';
import type { PendingItems } from './pending-items.ts';
import type { SetPermissionMode } from './posture-writer.ts';
import type { RunRecords } from './run-records.ts';
import type { TurnLeases } from './turn-leases.ts';
import type { TurnWrites } from './turn-writes.ts';

export type { NewConsoleThread } from './console-threads.ts';
export type { DequeuedTurn, QueueActor, QueueChange, QueuedDirective } from './directive-queue.ts';
export type { DirectiveAnswer, DirectiveOutcome, DirectiveWrite, QueuedAnswer, StartedAnswer, MoveOutcome, MoveWrite, NewConversation, NewThread } from './turn-writes.ts';
export type { ExpiredTurn, RunningTurn, TurnLease } from './turn-leases.ts';

/**
 * The console's writes, as one storage adapter provides them: every role port below, each method atomic.
 * A use case depends on the roles it uses (a turn on {@link RunRecords}, {@link PendingItems},
 * {@link TurnLeases} and the {@link DirectiveQueue}'s hand-over; the sweeper on the leases and the run's end), never on this whole.
 */
export type ConsoleWriter = ConsoleThreads & TurnWrites & RunRecords & PendingItems & TurnLeases & DirectiveQueue & {
  /** Sets a conversation's approval posture; answers the updated row, or null when there is none. */
  readonly setPermissionMode: SetPermissionMode;
};
