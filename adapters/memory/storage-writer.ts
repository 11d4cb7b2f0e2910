import type { StorageWriter } from '../../ports/storage-writer.ts';
import { memoryAddressLanding } from './address-landing.ts';
import { memoryConsoleThreads } from './console-threads.ts';
import { memoryThreadEdits } from './thread-edits.ts';
import type { MemoryOutbox } from './delivery-outbox.ts';
import { memoryDirectiveWrites } from './directive-writes.ts';
import { memoryMoveWrites } from './move-writes.ts';
import { memoryForkWrites } from './fork-writes.ts';
import { memoryRewindWrites } from './rewind-writes.ts';
import { memoryPendingItems } from './pending-items.ts';
import { memorySetPermissionMode } from './posture-writer.ts';
import { memoryQueueEdits } from './queue-edits.ts';
import { memoryRunRecords } from './run-records.ts';
import type { MemoryState } from './state.ts';
import { memoryTurnHandover } from './turn-handover.ts';
import { memoryTurnLeases } from './turn-leases.ts';

// Atomicity in memory: every method checks and writes without an `await` in between, so no other
// call can interleave with it on the one JavaScript thread.

/** The console's writes over the memory state: every role, each in its own file, over one state. */
export function memoryStorageWriter(state: MemoryState, outbox: MemoryOutbox): StorageWriter {
  return {
    ...memoryConsoleThreads(state),
    ...memoryThreadEdits(state),
    ...memoryAddressLanding(state),
    ...memoryDirectiveWrites(state),
    ...memoryMoveWrites(state, outbox),
    ...memoryForkWrites(state),
    ...memoryRewindWrites(state),
    ...memoryQueueEdits(state),
    ...memoryTurnHandover(state),
    ...memoryRunRecords(state),
    ...memoryPendingItems(state),
    ...memoryTurnLeases(state),
    setPermissionMode: memorySetPermissionMode(state),
  };
}
