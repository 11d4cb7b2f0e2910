import { uuidv7 } from 'uuidv7';
import type { Pending } from '../../domain/model.ts';
import { checkPendingAnswers } from '../../domain/pending-answers.ts';
import type { PendingItems } from '../../ports/pending-items.ts';
import type { MemoryState } from './state.ts';

/** A run's approvals and questions over the memory state; an answer checks and removes all its items with no `await` in between. */
export function memoryPendingItems(state: MemoryState): PendingItems {
  return {
    async addPending(fields) {
      if (!state.conversations.has(fields.conversation_id)) throw new Error(`No conversation ${fields.conversation_id}`);
      const pending: Pending = { id: uuidv7(), ...fields };
      state.pending.set(pending.id, pending);
      return pending;
    },

    async answerPending(threadId, answers) {
      const onThread = new Map<string, Pending>();
      for (const item of state.pending.values()) {
        if (state.conversations.get(item.conversation_id)?.thread_id === threadId) onThread.set(item.id, item);
      }
      const issues = checkPendingAnswers(onThread, answers);
      if (issues.length > 0) return { ok: false, issues };
      for (const answer of answers) {
        const runId = onThread.get(answer.id)?.run_id;
        state.pending.delete(answer.id);
        if (runId) state.pendingAnswers.set(answer.id, { run_id: runId, answer });
      }
      return { ok: true };
    },

    pendingAnswers: async (pendingIds) => pendingIds.flatMap((id) => {
      const stored = state.pendingAnswers.get(id);
      return stored === undefined ? [] : [stored.answer];
    }),
  };
}
