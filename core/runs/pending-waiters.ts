import type { PermissionDecision } from '../../ports/agent-runner.ts';
import type { BusSignal, PendingAnswer } from '../../ports/event-bus.ts';

/**
 * The agent requests waiting on this instance for a user's answer. Answers arrive as bus signals,
 * so a response posted to any instance resumes the agent wherever it runs. A signal can be lost
 * (the bus reconnecting): answers are stored too, and {@link recheck} finds them, after every
 * reconnect and every few seconds while anything waits. How long an ask may wait at all is the
 * agent idle time-out's business: the turn is cancelled, which answers it `cancelled`.
 */
export class PendingWaiters {
  readonly #waiting = new Map<string, { runId: string; resolve: (decision: PermissionDecision) => void }>();

  /** How many asks wait now (metrics). */
  get size(): number {
    return this.#waiting.size;
  }

  /** `lookup` answers the stored answers of the given pending ids. */
  constructor(private readonly lookup: (pendingIds: readonly string[]) => Promise<readonly PendingAnswer[]> = async () => []) {}

  /** Settles every waiter whose answer is stored; storage errors leave them waiting for the next try. */
  async recheck(): Promise<void> {
    if (this.#waiting.size === 0) return;
    for (const answer of await this.lookup([...this.#waiting.keys()])) this.#settle(answer);
  }

  /** Waits for the answer to a pending item of a run. */
  wait(pendingId: string, runId: string): Promise<PermissionDecision> {
    return new Promise((resolve) => this.#waiting.set(pendingId, { runId, resolve }));
  }

  /** Resumes the waiters the signal answers; others are not on this instance. */
  readonly onSignal = (signal: BusSignal): void => {
    if (signal.kind === 'reconnected') void this.recheck().catch(() => {});
    if (signal.kind !== 'pending_answered') return;
    for (const answer of signal.answers) this.#settle(answer);
  };

  /** A run that ends cancels what it still waits for. */
  cancelRun(runId: string): void {
    for (const [id, waiter] of this.#waiting) {
      if (waiter.runId === runId) {
        this.#waiting.delete(id);
        waiter.resolve({ outcome: 'cancelled' });
      }
    }
  }

  #settle(answer: PendingAnswer): void {
    const waiter = this.#waiting.get(answer.id);
    if (waiter === undefined) return;
    this.#waiting.delete(answer.id);
    waiter.resolve('option' in answer ? { outcome: 'selected', optionId: answer.option } : { outcome: 'cancelled' });
  }
}
