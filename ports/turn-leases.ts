import type { Id, Run } from '../domain/model.ts';

/** A turn's lease: its holder renews it while the turn runs; once it lapses, any instance may sweep the turn. */
export interface TurnLease {
  readonly holder: string;
  readonly ms: number;
}

/** A turn whose lease lapsed, now claimed by a sweeper: its run (perhaps already ended) and thread. */
export interface ExpiredTurn {
  readonly thread_id: Id;
  readonly run: Run;
}

/** The turn running on a thread now: its run and the instance that holds it. */
export interface RunningTurn {
  readonly run_id: Id;
  readonly conversation_id: Id;
  readonly holder: string | null;
}

/** Turns as leases: held by an instance while its turn runs, renewed, released, and swept once they lapse. */
export interface TurnLeases {
  /** Releases the turn a run holds (a later directive may start); a turn held by another run is left alone. */
  releaseTurn(runId: Id): Promise<void>;
  /**
   * Extends the leases `holder` holds on these runs' turns by `ms` from now; answers the run ids
   * whose turn it still held (a missing id was swept, or ended).
   */
  renewTurns(holder: string, runIds: readonly Id[], ms: number): Promise<Id[]>;
  /**
   * Claims one turn whose lease has lapsed for `lease.holder` (so two sweepers never take the same
   * one), or answers null when none has. The turn stays claimed until it is released.
   */
  claimExpiredTurn(lease: TurnLease): Promise<ExpiredTurn | null>;
  /** The turn running on a thread (on any of its conversations), or null. */
  runningTurn(threadId: Id): Promise<RunningTurn | null>;
}
