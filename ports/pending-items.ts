import type { Id, Pending } from '../domain/model.ts';
import type { PendingAnswer } from './event-bus.ts';

/** A run's approvals and questions: asked, answered all or none, and the answers kept until the run ends. */
export interface PendingItems {
  /** Records a pending approval or question of a run. */
  addPending(pending: Omit<Pending, 'id'>): Promise<Pending>;
  /**
   * Answers pending items of a thread atomically: when every id is pending on the thread (and each
   * option is one it offers), removes them all, stores each answer for {@link pendingAnswers} until
   * its run ends, and answers true; otherwise changes nothing and answers the issues.
   */
  answerPending(threadId: Id, answers: readonly PendingAnswer[]): Promise<{ ok: true } | { ok: false; issues: { index: number; message: string }[] }>;
  /** The answers stored for pending items still awaited by their run (an answer whose signal was lost is found here). */
  pendingAnswers(pendingIds: readonly Id[]): Promise<PendingAnswer[]>;
}
