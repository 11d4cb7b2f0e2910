import type { Logger } from '../../ports/logger.ts';
import type { Agent, Conversation, Run } from '../../domain/model.ts';
import { runError, type RunErrorCode } from '../../domain/run-errors.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import type { DequeuedTurn, DirectiveQueue } from '../../ports/directive-queue.ts';
import type { PendingItems } from '../../ports/pending-items.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';
import type { Emit } from './emit.ts';
import { runTurn } from './turn-run.ts';
import type { PendingWaiters } from './pending-waiters.ts';
import { unrefTimer } from '../timers.ts';

/** One turn to run: a run just written (its turn claimed under this instance's lease), and what its turn needs. */
export interface TurnOrder {
  readonly threadId: string;
  readonly conversation: Conversation;
  readonly run: Run;
  readonly agent: Agent;
  readonly prompt: string;
  readonly cwd: string;
  /** The posture in force for this turn (the directive's, else the conversation's). */
  readonly mode: string | null;
  /** The brief of the thread's history before this turn, read only when the agent starts a fresh session. */
  readonly history?: () => Promise<string | null>;
  /**
   * The run's prompt waits in storage until it is taken (a dequeued directive's): the turn takes it
   * just before the agent gets it, and lets the run go, unsent, when it cannot (see DirectiveQueue.takeUnsentPrompt).
   */
  readonly unsent?: boolean;
  /**
   * `run_started` and the prompt's model message were stored with the directive (and the event published by
   * its caller), and the conversation's session read there: the turn prompts at once, on this session.
   */
  readonly started?: { readonly sessionId: string | null };
}

export interface TurnDeps {
  /** What a turn records, asks, and holds: the run's records, its pending items, its turn's lease and its hand-over. */
  readonly writer: RunRecords & Pick<PendingItems, 'addPending'> & Pick<TurnLeases, 'renewTurns' | 'releaseTurn'> & Pick<DirectiveQueue, 'handOverTurn' | 'takeUnsentPrompt'>;
  /** Starts the turn of the queued directive a turn's end handed the thread to (this instance holds its lease); answers whether it did. None: nothing is queued here. */
  readonly startQueued?: (turn: DequeuedTurn) => Promise<boolean>;
  /**
   * Whether the instance is stopping: a turn that ends then is released without starting the next
   * queued directive (its agent is going away too), which waits for the next start, or another instance's sweep.
   */
  readonly stopping?: () => boolean;
  readonly runner: AgentRunner;
  readonly emit: Emit;
  readonly waiters: PendingWaiters;
  readonly log: Logger;
  /** This instance's id: the holder of the turns it claims. */
  readonly holder: string;
  /** A turn's lease; it is renewed every third of it while the turn runs. */
  readonly leaseMs: number;
  /** A turn whose agent sends nothing (and asks nothing) that long is cancelled. */
  readonly idleMs: number;
}

/** What this instance knows of a turn in flight. */
export interface InFlight {
  readonly controller: AbortController;
  lastActivity: number;
  /** Open permission asks, and when the oldest began: waiting for a person is not agent silence. */
  asking: number;
  askedAt: number;
  /** When the lease was last renewed (or claimed): past one lease without renewal, the turn may be swept elsewhere. */
  renewedAt: number;
  /** Why the turn is being cancelled, once it is. */
  cancelled: { readonly code: RunErrorCode; readonly reason: string } | null;
  /** The lease was lost (swept elsewhere): nothing more is recorded for the run. */
  lost: boolean;
  /**
   * The turn's release has begun (set before it is asked, so no renewal can answer first): a renewal
   * that finds the turn gone from now on saw this release, not a loss.
   */
  releasing: boolean;
}

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

  const renew = setInterval(() => {
    const ids = [...running.keys()];
    if (ids.length === 0) return;
    const at = Date.now();
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
        if (entry !== undefined && Date.now() - entry.renewedAt > deps.leaseMs) lose(id, entry, 'the turn lease could not be renewed for a whole lease; stopping the run here');
      }
    });
  }, Math.max(100, Math.floor(deps.leaseMs / 3)));
  unrefTimer(renew);

  const idle = setInterval(() => {
    const now = Date.now();
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
  }, Math.max(50, Math.min(5_000, Math.floor(deps.idleMs / 4))));
  unrefTimer(idle);

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
      const now = Date.now();
      const entry: InFlight = {
        controller: new AbortController(), lastActivity: now, asking: 0, askedAt: now, renewedAt: now, cancelled: null, lost: false, releasing: false,
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
    /** Cancels a run if this instance runs it (a user's cancel reaches every instance). */
    cancel: (runId: string): boolean => cancel(runId, 'cancelled'),
    /** Waits for every turn in flight (shutdown). */
    async drain(): Promise<void> {
      await Promise.allSettled([...inFlight]);
      clearInterval(renew);
      clearInterval(idle);
    },
  };
}

export type BackgroundTurns = ReturnType<typeof backgroundTurns>;
