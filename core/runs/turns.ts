import { runError, type RunErrorCode } from '../../domain/run-errors.ts';
import type { SteerOutcome } from '../../ports/agent-runner.ts';
import { runTurn } from './turn-run.ts';
import type { InFlight, TurnDeps, TurnOrder } from './turn-types.ts';

/**
 * Runs turns in the background and makes what the agent does into stored rows and wire events:
 * `run_started` first, then messages and approvals, then `run_finished`, `run_error` or
 * `run_cancelled`, and `reflex_asleep` last, whatever happened; only then is the turn handed over
 * (released, or taken by the next queued directive, which is started here).
 * While a turn runs its lease is renewed; an idle agent is cancelled.
 */
export function backgroundTurns(deps: TurnDeps) {
  const inFlight = new Set<Promise<void>>();
  const running = new Map<string, InFlight>();

  /** Stops a run here for good: it was swept elsewhere, or may be (its lease went unrenewed for a whole lease). */
  const lose = (id: string, entry: InFlight, why: string): void => {
    if (entry.lost || entry.releasing) return;
    deps.log.warn({ run: id }, why);
    entry.lost = true;
    cancel(id, 'turn_lease_expired');
  };

  const { clock } = deps;
  const stopRenewing = clock.every(Math.max(100, Math.floor(deps.leaseMs / 3)), () => {
    const ids = [...running.keys()];
    if (ids.length === 0) return;
    const at = clock.now();
    deps.writer.renewTurns(deps.holder, ids, deps.leaseMs).then((held) => {
      for (const id of ids) {
        const entry = running.get(id);
        if (entry === undefined) continue;
        if (held.includes(id)) entry.renewedAt = at;
        // Swept elsewhere (this instance was taken for dead): stop the agent, record nothing more.
        else lose(id, entry, 'the turn lease was lost; stopping the run here');
      }
    }, (error: unknown) => {
      deps.log.warn({ err: error }, 'renewing turn leases failed');
      // Unrenewed for a whole lease, a turn may already be swept by another instance: running on
      // would end it twice, and let a new turn start beside this one.
      for (const id of ids) {
        const entry = running.get(id);
        if (entry !== undefined && clock.now() - entry.renewedAt > deps.leaseMs) lose(id, entry, 'the turn lease could not be renewed for a whole lease; stopping the run here');
      }
    });
  });

  const stopIdleChecks = clock.every(Math.max(50, Math.min(5_000, Math.floor(deps.idleMs / 4))), () => {
    const now = clock.now();
    for (const [id, entry] of running) {
      if (entry.cancelled !== null) continue;
      const seconds = Math.round(deps.idleMs / 1000);
      // An ask waits for a person, not the agent: it has a deadline of its own, of the same length.
      if (entry.asking > 0) {
        if (now - entry.askedAt > deps.idleMs) cancel(id, 'approval_timeout', `no answer came for ${seconds} s; the turn was cancelled`);
      } else if (now - entry.lastActivity > deps.idleMs) {
        cancel(id, 'agent_idle', `the agent sent nothing for ${seconds} s; the turn was cancelled`);
      }
    }
  });

  /** Cancels a run this instance runs; answers whether it runs here. */
  function cancel(runId: string, code: RunErrorCode, reason?: string): boolean {
    const entry = running.get(runId);
    if (entry === undefined) return false;
    if (entry.cancelled !== null) return true;
    entry.cancelled = { code, reason: runError(code, reason) };
    entry.controller.abort();
    // Asks still open are answered `cancelled`, as ACP wants once a turn is cancelled.
    deps.waiters.cancelRun(runId);
    return true;
  }

  return {
    /** Starts a turn and returns at once: the directive is answered while it runs. */
    start(request: TurnOrder): void {
      const now = clock.now();
      const entry: InFlight = {
        controller: new AbortController(), agent: request.agent, sessionId: null, steered: new Set(),
        lastActivity: now, asking: 0, askedAt: now, renewedAt: now, cancelled: null, lost: false, releasing: false,
      };
      running.set(request.run.id, entry);
      const turn: Promise<void> = runTurn(deps, request, entry)
        .catch((error: unknown) => deps.log.error({ err: error, run: request.run.id }, 'running the turn failed'))
        .finally(() => {
          running.delete(request.run.id);
          inFlight.delete(turn);
        });
      inFlight.add(turn);
    },
    /** Whether this instance runs the run now. */
    runs: (runId: string): boolean => running.has(runId),
    /**
     * Sends `text` into a run this instance runs (contract section 11): null when it does not run here;
     * `asking` when the turn waits on an approval or a question (nothing is sent: it runs next, as queued);
     * `promptRequired` when the turn is ending (cancelled, released, lost) or has no session yet; else what
     * the runner answered. A `messageId` steered into the run already is not sent again (`other`: taken).
     */
    async steer(runId: string, text: string, messageId: string | null): Promise<SteerOutcome | 'asking' | null> {
      const entry = running.get(runId);
      if (entry === undefined) return null;
      if (entry.asking > 0) return 'asking';
      if (entry.cancelled !== null || entry.lost || entry.releasing || entry.sessionId === null) return 'promptRequired';
      if (messageId !== null) {
        if (entry.steered.has(messageId)) return 'other';
        entry.steered.add(messageId);
      }
      const outcome = await deps.runner.steer(entry.agent, entry.sessionId, text).catch(() => 'other' as const);
      // Not sent: a retry of the same message may go.
      if (messageId !== null && (outcome === 'promptRequired' || outcome === 'unsupported')) entry.steered.delete(messageId);
      if (outcome === 'injected') entry.lastActivity = clock.now();
      return outcome;
    },
    /** Cancels a run if this instance runs it (a user's cancel reaches every instance). */
    cancel: (runId: string): boolean => cancel(runId, 'cancelled'),
    /** Waits for every turn in flight (shutdown). */
    async drain(): Promise<void> {
      await Promise.allSettled([...inFlight]);
      stopRenewing();
      stopIdleChecks();
    },
  };
}

export type BackgroundTurns = ReturnType<typeof backgroundTurns>;
