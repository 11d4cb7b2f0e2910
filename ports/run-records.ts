import type { Id, Message, ModelMessage, Run, RunStatus } from '../domain/model.ts';

/** What a run records as it goes: the agent session, ledger and model messages, and its end. */
export interface RunRecords {
  /** Remembers the agent session a conversation runs in (not part of the row answered). */
  setSession(conversationId: Id, sessionId: string | null): Promise<void>;
  /** The agent session a conversation runs in, or null. */
  sessionOf(conversationId: Id): Promise<string | null>;
  /** Appends a message to a thread's ledger. */
  appendMessage(threadId: Id, message: { role: string; text: string; artifact_id: Id | null }): Promise<Message>;
  /** Appends a model message to a run. */
  appendModelMessage(runId: Id, message: { role: string; content: string }): Promise<ModelMessage>;
  /**
   * Ends a run (status, error, `ended_at`) and drops its leftover pending items and their stored
   * answers; the turn stays claimed until {@link releaseTurn}, so nothing can start before the
   * run's last event is stored. A run that has already ended is answered as it is, unchanged.
   */
  finishRun(runId: Id, status: Exclude<RunStatus, 'running'>, error: string | null): Promise<Run>;
}
