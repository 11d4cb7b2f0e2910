import type { MikroORM } from '@mikro-orm/postgresql';
import type { StorageWriter } from '../../ports/storage-writer.ts';
import { mikroOrmAddressLanding } from './address-landing.ts';
import { mikroOrmConsoleThreads } from './console-threads.ts';
import { mikroOrmThreadEdits } from './thread-edits.ts';
import { mikroOrmDirectiveWrites } from './directive-writes.ts';
import { mikroOrmMoveWrites } from './move-writes.ts';
import { mikroOrmForkWrites } from './fork-writes.ts';
import { mikroOrmRewindWrites } from './rewind-writes.ts';
import { mikroOrmPendingItems } from './pending-items.ts';
import { mikroOrmSetPermissionMode } from './posture-writer.ts';
import { mikroOrmQueueEdits } from './queue-edits.ts';
import { mikroOrmRunRecords } from './run-records.ts';
import { mikroOrmTurnHandover } from './turn-handover.ts';
import { mikroOrmTurnLeases } from './turn-leases.ts';

/**
 * The console's writes: every role, each in its own file, over one ORM. Each method is one
 * transaction, or one statement where that suffices, and inside a transaction every statement runs
 * on its connection with nothing else awaited (on the embedded socket, all connections share one
 * session: waiting on another one would deadlock).
 */
export function mikroOrmStorageWriter(orm: MikroORM): StorageWriter {
  return {
    ...mikroOrmConsoleThreads(orm),
    ...mikroOrmThreadEdits(orm),
    ...mikroOrmAddressLanding(orm),
    ...mikroOrmDirectiveWrites(orm),
    ...mikroOrmMoveWrites(orm),
    ...mikroOrmForkWrites(orm),
    ...mikroOrmRewindWrites(orm),
    ...mikroOrmQueueEdits(orm),
    ...mikroOrmTurnHandover(orm),
    ...mikroOrmRunRecords(orm),
    ...mikroOrmPendingItems(orm),
    ...mikroOrmTurnLeases(orm),
    setPermissionMode: mikroOrmSetPermissionMode(orm),
  };
}
