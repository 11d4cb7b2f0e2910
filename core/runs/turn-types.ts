import type { Agent, Conversation, Run } from '../../domain/model.ts';
import type { RunErrorCode } from '../../domain/run-errors.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import type { Clock } from '../../ports/clock.ts';
import type { DequeuedTurn, TurnHandover } from '../../ports/turn-handover.ts';
import type { Logger } from '../../ports/logger.ts';
import type { PendingItems } from '../../ports/pending-items.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';
import type { Emit } from './emit.ts';
import type { PendingWaiters } from './pending-waiters.ts';

// What the background turns (turns.ts), one turn's run (turn-run.ts) and its end (turn-end.ts) share:
// kept here, apart from all three, so none of them imports another that imports it back.

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
  /** The ledger line said when the agent is briefed ({@link BRIEFED} unless told: a fork's first turn says so). */
  readonly briefedNote?: string;
  /** A fork's first turn: the source's session its agent may fork instead of a brief (core/forks/fork-session.ts). */
  readonly forkFrom?: () => Promise<string | null>;
  /**
   * The run's prompt waits in storage until it is taken (a dequeued directive's): the turn takes it
   * just before the agent gets it, and lets the run go, unsent, when it cannot (see TurnHandover.takeUnsentPrompt).
   */
  readonly unsent?: boolean;
  /**
   * `run_started` and the prompt's model message were stored with the directive (and the event published by
   * its caller), and the conversation's session read there: the turn prompts at once, on this session.
   */
  readonly started?: { readonly sessionId: string | null };
  /** The ledger message of the directive this turn answers, when known: its checkpoint names it. */
  readonly messageId?: string | null;
}

/**
 * Records a checkpoint of a turn's directory (contract section 11): before a thread's first turn (`runId` null)
 * and at the end of every turn. Never throws: a checkpoint that cannot be taken is logged, and the turn goes on.
 */
export type TurnCheckpoint = (turn: { readonly threadId: string; readonly runId: string | null; readonly messageId: string | null; readonly directory: string | null }) => Promise<void>;

export interface TurnDeps {
  /** What a turn records, asks, and holds: the run's records, its pending items, its turn's lease and its hand-over. */
  readonly writer: RunRecords & Pick<PendingItems, 'addPending'> & Pick<TurnLeases, 'renewTurns' | 'releaseTurn'> & Pick<TurnHandover, 'handOverTurn' | 'takeUnsentPrompt'>;
  /** Starts the turn of the queued directive a turn's end handed the thread to (this instance holds its lease); answers whether it did. None: nothing is queued here. */
  readonly startQueued?: (turn: DequeuedTurn) => Promise<boolean>;
  /**
   * Whether the instance is stopping: a turn that ends then is released without starting the next
   * queued directive (its agent is going away too), which waits for the next start, or another instance's sweep.
   */
  readonly stopping?: () => boolean;
  readonly runner: AgentRunner;
  /** Checkpoints of the turn's directory, before the thread's first turn and at the end of each; none: no checkpoints. */
  readonly checkpoint?: TurnCheckpoint;
  readonly emit: Emit;
  readonly waiters: PendingWaiters;
  readonly log: Logger;
  /** What time it is, and when the lease's renewal, the idle check and a retry come round. */
  readonly clock: Clock;
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
  /** The turn's agent, and its session once known: where a steer goes. */
  readonly agent: Agent;
  sessionId: string | null;
  /** The `message_id`s steered into the turn already: a repeat is never sent again. */
  readonly steered: Set<string>;
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
