import type { AddressLanding } from './address-landing.ts';
import type { ConsoleThreads } from './console-threads.ts';
import type { DirectiveWrites } from './directive-writes.ts';
import type { ForkWrites } from './fork-writes.ts';
import type { RewindWrites } from './rewind-writes.ts';
import type { MoveWrites } from './move-writes.ts';
import type { PendingItems } from './pending-items.ts';
import type { SetPermissionMode } from './posture-writer.ts';
import type { QueueEdits } from './queue-edits.ts';
import type { RunRecords } from './run-records.ts';
import type { TurnHandover } from './turn-handover.ts';
import type { ThreadEdits } from './thread-edits.ts';
import type { TurnLeases } from './turn-leases.ts';

/**
 * The console's writes, as one storage adapter provides them: every role port below, each method
 * atomic. A use case depends on the roles it uses (a turn on {@link RunRecords}, {@link PendingItems},
 * {@link TurnLeases} and the {@link TurnHandover}; the sweeper on the leases, the hand-over and the
 * run's end), never on this whole; each names a role's types from the file that defines them.
 */
export type StorageWriter = ConsoleThreads & ThreadEdits & AddressLanding & DirectiveWrites & MoveWrites & ForkWrites & RewindWrites & QueueEdits & TurnHandover & RunRecords & PendingItems & TurnLeases & {
  /** Sets a conversation's approval posture; answers the updated row, or null when there is none. */
  readonly setPermissionMode: SetPermissionMode;
};
