import type { Cancel, Clock } from '../../ports/clock.ts';
import type { Logger } from '../../ports/logger.ts';
import { runError } from '../../domain/run-errors.ts';
import type { DequeuedTurn, TurnHandover } from '../../ports/turn-handover.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';
import { runEndKeys, type Emit } from './emit.ts';
import type { TurnCheckpoint } from './turn-types.ts';

/**
 * Sweeps turns whose lease lapsed (their instance crashed, was killed, or lost its database for
 * longer than a lease): a queued directive's run whose prompt never reached its agent is started
 * again, here; any other run ends `failed` with `turn_lease_expired` and `run_error` is stored,
 * unless it had already ended; then `reflex_asleep`; then the turn is handed over (the thread's next
 * queued directive starts, here). A queue found with no turn running is started too. Runs at start and
 * every half lease, on every instance: claims are exclusive, so two sweepers never take one turn.
 */
export function sweeper(deps: {
  /** The lapsed turns it claims and hands over, the runs it ends, and the queues it finds idle. */
  readonly writer: Pick<TurnLeases, 'claimExpiredTurn'> & Pick<RunRecords, 'finishRun'> & Pick<TurnHandover, 'handOverTurn' | 'startIdleQueue' | 'unsentTurn'>;
  /** Starts the turn of a queued directive that a sweep started or claimed (this instance holds its lease), answering whether it did; none: nothing is started. */
  readonly startQueued?: (turn: DequeuedTurn) => Promise<boolean>;
  readonly emit: Emit;
  /** Checkpoints of a swept turn's directory; none: no checkpoints. */
  readonly checkpoint?: TurnCheckpoint;
  readonly log: Logger;
  readonly holder: string;
  readonly leaseMs: number;
  /** When the next sweep comes round. */
  readonly clock: Clock;
  /** Whether this instance's own background turns still run the run: its lapsed lease is renewed by the claim, not swept. */
  readonly runsHere: (runId: string) => boolean;
}) {
  const { writer, emit, log } = deps;
  let sweeping: Promise<number> | null = null;
  let stopSweeping: Cancel | null = null;
  const lease = () => ({ holder: deps.holder, ms: deps.leaseMs });

  async function sweepAll(): Promise<number> {
    let swept = 0;
    for (let turn = await writer.claimExpiredTurn(lease()); turn !== null; turn = await writer.claimExpiredTurn(lease())) {
      const { thread_id: threadId, run } = turn;
      if (deps.runsHere(run.id)) continue;
      if (run.status === 'running') {
        // Started by a hand-over whose turn never gave the agent its prompt (its instance died, or lost
        // the hand-over's answer): started again here, under the lease just claimed, rather than failed.
        const unsent = deps.startQueued === undefined ? null : await writer.unsentTurn(run.id);
        if (unsent !== null && (await deps.startQueued!(unsent))) {
          log.warn({ run: run.id, thread: threadId }, 'started again a queued directive whose prompt never reached its agent');
          swept += 1;
          continue;
        }
        // The worktree as the lapsed turn left it, when this instance sees it (the checkpoint logs its own failure).
        // Waited for a third of the lease at most: the claim must not lapse under it, or another instance would
        // sweep the same turn again. A checkpoint still going on finishes on its own (its ref is written once).
        if (deps.checkpoint !== undefined) {
          let stopWaiting = () => {};
          await Promise.race([
            deps.checkpoint({ threadId, runId: run.id, messageId: null, directory: run.directory }),
            new Promise<void>((resolve) => { stopWaiting = deps.clock.after(Math.floor(deps.leaseMs / 3), resolve); }),
          ]);
          stopWaiting();
        }
        const ended = await writer.finishRun(run.id, 'failed', runError('turn_lease_expired'));
        await emit(threadId, 'run_error', { run_id: run.id, code: 'turn_lease_expired', error: ended.error, run: ended }, runEndKeys(run.id).end);
      }
      await emit(threadId, 'reflex_asleep', { run_id: run.id }, runEndKeys(run.id).asleep);
      // The dead holder's queue goes on here: the next directive starts with the release, in one write.
      const next = await writer.handOverTurn(run.id, lease());
      log.warn({ run: run.id, thread: threadId }, 'swept a turn whose lease lapsed');
      if (next !== null) await deps.startQueued?.(next);
      swept += 1;
    }
    // A queue with no turn running (its turn was freed without a hand-over) is started too.
    for (let next = await writer.startIdleQueue(lease()); next !== null; next = await writer.startIdleQueue(lease())) {
      log.warn({ run: next.run.id, thread: next.thread.id }, 'started a queued directive whose thread was left idle');
      await deps.startQueued?.(next);
    }
    return swept;
  }

  /** One sweep; a sweep already under way is joined, not doubled. Storage errors are logged, not thrown. */
  function sweep(): Promise<number> {
    sweeping ??= sweepAll()
      .catch((error: unknown) => {
        log.warn({ err: error }, 'sweeping lapsed turns failed; trying again later');
        return 0;
      })
      .finally(() => {
        sweeping = null;
      });
    return sweeping;
  }

  return {
    sweep,
    /** Sweeps now, then every half lease. */
    start(): void {
      void sweep();
      stopSweeping = deps.clock.every(Math.max(250, Math.floor(deps.leaseMs / 2)), () => void sweep());
    },
    /** Stops sweeping; waits for a sweep under way. */
    async stop(): Promise<void> {
      stopSweeping?.();
      stopSweeping = null;
      await sweeping;
    },
  };
}

export type Sweeper = ReturnType<typeof sweeper>;
