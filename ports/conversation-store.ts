import type { Address, Conversation, Id, ModelMessage, Page, PageRequest, Pending, Run } from '../domain/model.ts';

/**
 * What lives under a thread: conversations, their runs and the runs' model messages, and pending
 * approvals and questions. Every read names the thread it is under, so an id of another thread
 * answers nothing. The thread's access is checked before any of these is called.
 */
export interface ConversationStore {
  /** A conversation whose thread the user can access, or null (unknown and inaccessible alike). */
  findForUser(userId: string, conversationId: Id): Promise<Conversation | null>;
  /** The thread's conversations, oldest first. */
  listByThread(threadId: Id): Promise<Conversation[]>;
  /**
   * The conversation that lives at a channel address and has not moved away (one at most: a move into
   * an occupied address is refused), or null. Not scoped to a user: the caller checks the thread's access.
   */
  livingAt(address: Address): Promise<Conversation | null>;
  /** The thread's latest conversation (the one that speaks), or null: one index probe, not the list. */
  latestByThread(threadId: Id): Promise<Conversation | null>;
  /** A page of a conversation's runs, newest first; null when the conversation is not in the thread. */
  runsPage(threadId: Id, conversationId: Id, page: PageRequest): Promise<Page<Run> | null>;
  /** A page of a run's model messages, newest first; null when the run is not in the thread. */
  modelMessagesPage(threadId: Id, runId: Id, page: PageRequest): Promise<Page<ModelMessage> | null>;
  /** The approvals and questions pending on the thread, oldest first. */
  pendingByThread(threadId: Id): Promise<Pending[]>;
}

