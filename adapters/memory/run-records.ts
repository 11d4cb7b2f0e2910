import { uuidv7 } from 'uuidv7';
import type { Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { MemoryState } from './state.ts';
import { appendLedgerMessage } from './write-helpers.ts';

/** What a run records over the memory state: its session, ledger and model messages, and its end. */
export function memoryRunRecords(state: MemoryState): RunRecords {
  return {
    async setSession(conversationId, sessionId) {
      if (!state.conversations.has(conversationId)) return;
      if (sessionId === null) state.sessions.delete(conversationId);
      else state.sessions.set(conversationId, sessionId);
    },

    sessionOf: async (conversationId) => state.sessions.get(conversationId) ?? null,

    appendMessage: async (threadId, message) => appendLedgerMessage(state, threadId, message),

    async appendModelMessage(runId, fields) {
      if (!state.runs.has(runId)) throw new Error(`No run ${runId}`);
      const id = uuidv7();
      const message = { id, run_id: runId, role: fields.role, content: fields.content, created_at: uuid7Time(id) };
      state.modelMessages.set(id, message);
      return message;
    },

    async finishRun(runId, status, error) {
      const run = state.runs.get(runId);
      if (run === undefined) throw new Error(`No run ${runId}`);
      if (run.status !== 'running') return run;
      const ended: Run = { ...run, status, error, ended_at: new Date().toISOString() };
      state.runs.set(runId, ended);
      for (const item of [...state.pending.values()]) if (item.run_id === runId) state.pending.delete(item.id);
      for (const [id, stored] of [...state.pendingAnswers]) if (stored.run_id === runId) state.pendingAnswers.delete(id);
      return ended;
    },
  };
}
