import type { RunStatus } from '../../domain/model.ts';
import { waited } from '../clock.ts';
import { runEndKeys } from './emit.ts';
import type { InFlight, TurnDeps } from './turn-types.ts';

/** How a turn ended, as its run records it. */
export interface Outcome {
  readonly status: Exclude<RunStatus, 'running'>;
  readonly error: string | null;
  readonly stopReason: string | null;
}

/**
 * Ends the run, stores its last events, then hands the turn over (the next queued directive starts): each step retried while storage
 * is down (the lease is renewed meanwhile), for at most one lease; after that the turn is left to
 * lapse, and a sweeper on any instance ends what is left.
 */
export async function finish(
  deps: TurnDeps,
  entry: InFlight,
  threadId: string,
  runId: string,
  outcome: Outcome,
): Promise<void> {
  const deadline = deps.clock.now() + deps.leaseMs;
  const step = async <T>(work: () => Promise<T>): Promise<T> => {
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        return await work();
      } catch (error) {
        if (deps.clock.now() + wait > deadline || entry.lost) throw error;
        deps.log.warn({ err: error, run: runId }, 'recording the end of a run failed; trying again');
        await waited(deps.clock, wait);
      }
    }
  };
  try {
    const ended = await step(() => deps.writer.finishRun(runId, outcome.status, outcome.error));
    if (ended.status !== outcome.status || ended.error !== outcome.error) {
      // Someone else ended it first (a sweeper that took this instance for dead): theirs are the last events.
      deps.log.warn({ run: runId }, 'the run was already ended elsewhere; recording nothing more');
      entry.lost = true;
      return;
    }
    const [code] = (outcome.error ?? '').split(':', 1);
    // Keyed: a step retried after a write whose outcome was unknown (committed, its answer lost) finds the first.
    const keys = runEndKeys(runId);
    if (outcome.status === 'succeeded') await step(() => deps.emit(threadId, 'run_finished', { run_id: runId, stop_reason: outcome.stopReason, run: ended }, keys.end));
    else if (outcome.status === 'cancelled') await step(() => deps.emit(threadId, 'run_cancelled', { run_id: runId, code, reason: outcome.error, run: ended }, keys.end));
    else await step(() => deps.emit(threadId, 'run_error', { run_id: runId, code, error: outcome.error, run: ended }, keys.end));
    await step(() => deps.emit(threadId, 'reflex_asleep', { run_id: runId }, keys.asleep));
    // Marked first: a renewal answered after the release is stored, even before this await resumes, is no loss.
    entry.releasing = true;
    // Stopping, the queue waits: a turn started now would end at once with the agents, and each end would start the next.
    if (deps.stopping?.() === true) return void (await step(() => deps.writer.releaseTurn(runId)));
    // Released and, when a directive is queued, its turn started, in one write: started here, under this instance's lease.
    const next = await step(() => deps.writer.handOverTurn(runId, { holder: deps.holder, ms: deps.leaseMs }));
    if (next !== null) await deps.startQueued?.(next);
  } catch (error) {
    deps.log.warn({ err: error, run: runId }, 'the end of a run could not be recorded; its lease will lapse and be swept');
    entry.lost = true;
  }
}
