import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import { liveTarget } from './live-target.ts';

/** The refusal a path earns the caller before anything its request says is looked at, or null. */
export type PathAccess = (user: User, id: string) => Promise<Failure | null>;

/**
 * Whether the caller may use what a write's path names, asked when its body (or query) is refused:
 * an unknown or inaccessible thread or conversation is 404 whatever the body says (the read rules:
 * the thread first), so a bad body never tells a caller that someone else's thread exists. Each check
 * is the one its use case starts with, and reads the row alone.
 */
export function pathAccess(storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: ConsoleThreads }) {
  return {
    /** A thread the caller owns or is a member of; else `thread_unavailable`. */
    thread: (async (user, threadId) =>
      (await storage.threads.findRow(user.id, threadId)) === null ? { code: 'thread_unavailable' } : null) satisfies PathAccess,
    /**
     * A directive's `{thread}`: another user's thread row is `thread_unavailable`; a row or key of the
     * caller's passes, and so does any other value (a key whose first directive creates the thread).
     */
    threadOrKey: (async (user, ref) =>
      (await liveTarget(storage, user.id, ref)) === 'not_found' ? { code: 'thread_unavailable' } : null) satisfies PathAccess,
    /** A conversation of a thread the caller can use; else `conversation_unavailable`. */
    conversation: (async (user, conversationId) =>
      (await storage.conversations.findForUser(user.id, conversationId)) === null ? { code: 'conversation_unavailable' } : null) satisfies PathAccess,
  };
}

export type PathAccesses = ReturnType<typeof pathAccess>;
