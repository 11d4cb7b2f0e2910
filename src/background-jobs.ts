import { CHAT_CLAIM_PRUNE_EVERY_MS, pruneChatClaims } from '../core/channels/chat-claims.ts';
import { pruneWorktrees } from '../core/worktrees/run-directory.ts';
import type { Sweeper } from '../core/runs/sweeper.ts';
import type { Scheduler } from '../core/automation/scheduler.ts';
import type { WebhookSender } from '../core/automation/webhook-sender.ts';
import type { Catalog } from '../ports/catalog.ts';
import type { ChatInbox } from '../ports/chat-inbox.ts';
import type { Cancel, Clock } from '../ports/clock.ts';
import type { Logger } from '../ports/logger.ts';
import type { Worktrees } from '../ports/worktrees.ts';

/** A lost answer signal is looked for in storage this often, even without a reconnect to tell of it. */
export const ANSWER_RECHECK_EVERY_MS = 5_000;

/** Unused worktrees are looked for at start and then this often. */
export const WORKTREE_SWEEP_EVERY_MS = 3_600_000;

/**
 * What an instance does in the background, on the clock, beside answering requests: the sweep of lapsed
 * turns (core/runs/sweeper.ts), the recheck of answers whose signal was lost, the pruning of worktrees
 * removed by hand and the removal of those unused for `retentionMs` (none when 0), the pruning of old
 * chat message claims, the schedules' due times (core/automation/scheduler.ts) and the webhooks' outbox
 * (core/automation/webhook-sender.ts). Each runs at start (the recheck only later) and then on its own period; none keeps
 * the host alive by itself.
 */
export function backgroundJobs(deps: {
  readonly clock: Clock;
  readonly log: Logger;
  readonly sweeps: Pick<Sweeper, 'start' | 'stop'>;
  /** Rechecks the asks waiting on this instance (PendingWaiters.recheck). */
  readonly recheckAnswers: () => Promise<void>;
  readonly catalog: Pick<Catalog, 'projects' | 'project'>;
  readonly worktrees: Pick<Worktrees, 'prune' | 'sweep'>;
  /** How long a worktree may go unused before it is removed (its work committed first); 0: never. */
  readonly retentionMs: number;
  readonly chatInbox: Pick<ChatInbox, 'pruneClaims'>;
  /** The scheduler of schedules (core/automation/scheduler.ts): looks at start, then every second. */
  readonly scheduler?: Pick<Scheduler, 'start' | 'stop'>;
  /** The webhook sender (core/automation/webhook-sender.ts): looks at start, then every second. */
  readonly webhooks?: Pick<WebhookSender, 'start' | 'stop'>;
}) {
  const { clock, log, worktrees } = deps;
  const stops: Cancel[] = [];

  const recheck = () => void deps.recheckAnswers().catch((error: unknown) => log.warn({ err: error }, 'rechecking answers failed'));
  const sweepWorktrees = () => void worktrees.sweep(deps.retentionMs).then(
    (ids) => { if (ids.length > 0) log.info({ threads: ids }, 'removed unused worktrees'); },
    (error: unknown) => log.warn({ err: error }, 'removing unused worktrees failed'),
  );
  const pruneClaims = () => void pruneChatClaims(deps.chatInbox, log, clock.now());

  return {
    /** Starts every job: what runs at start runs now, in the background. */
    start(): void {
      stops.push(clock.every(ANSWER_RECHECK_EVERY_MS, recheck));
      deps.sweeps.start();
      // Worktrees removed by hand (or by a clean-up) since the last start are forgotten by their repositories.
      void pruneWorktrees(deps.catalog, worktrees, log);
      // Worktrees unused for WORKTREE_RETENTION_DAYS go (their work committed on their branch first).
      if (deps.retentionMs > 0) {
        sweepWorktrees();
        stops.push(clock.every(WORKTREE_SWEEP_EVERY_MS, sweepWorktrees));
      }
      // Chat message claims older than the horizon go (core/channels/chat-claims.ts).
      pruneClaims();
      stops.push(clock.every(CHAT_CLAIM_PRUNE_EVERY_MS, pruneClaims));
      // Due times missed while no instance ran fire now (the latest, when under an hour old).
      deps.scheduler?.start();
      // What an earlier start (or a stopped instance) left in the webhooks' outbox goes out now.
      deps.webhooks?.start();
    },
    /** Stops every job; waits for a sweep under way. */
    async stop(): Promise<void> {
      for (const stop of stops.splice(0)) stop();
      await Promise.all([deps.sweeps.stop(), deps.scheduler?.stop(), deps.webhooks?.stop()]);
    },
  };
}

export type BackgroundJobs = ReturnType<typeof backgroundJobs>;
