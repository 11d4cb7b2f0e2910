import { uuidv7 } from 'uuidv7';
import { CONSOLE_CHANNEL, type Conversation, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { ConsoleThreads, NewConsoleThread } from '../../ports/console-threads.ts';
import type { MemoryState } from './state.ts';
import { newConversation } from './write-helpers.ts';

/** Writes a new thread and its first conversation (the caller checked its key is free). Never awaits. */
export function openThread(state: MemoryState, input: NewConsoleThread): { thread: Thread; conversation: Conversation } {
  const id = uuidv7();
  const thread: Thread = {
    id, key: input.key, channel: input.channel ?? CONSOLE_CHANNEL, owner: input.owner, project: input.project, title: input.title,
    fork_of: null, fork_cutoff: null, created_at: uuid7Time(id), worktree: null, archived: false,
  };
  state.threads.set(id, thread);
  state.members.set(id, new Set());
  return { thread, conversation: newConversation(state, id, input.conversation) };
}

/** The owner's thread with this key, or null. */
export function threadByKey(state: MemoryState, owner: string, key: string): Thread | null {
  for (const thread of state.threads.values()) if (thread.owner === owner && thread.key === key) return thread;
  return null;
}

/** Console threads by key over the memory state; each method checks and writes without an `await` in between. */
export function memoryConsoleThreads(state: MemoryState): ConsoleThreads {
  const findByKey = (owner: string, key: string): Thread | null => threadByKey(state, owner, key);
  const firstConversation = (threadId: string): Conversation | undefined =>
    [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? -1 : 1))[0];

  return {
    findByKey: async (owner, key) => findByKey(owner, key),

    async createConsoleThread(input) {
      const existing = findByKey(input.owner, input.key);
      if (existing !== null) {
        return { thread: existing, conversation: firstConversation(existing.id) ?? newConversation(state, existing.id, input.conversation) };
      }
      return openThread(state, input);
    },

    async setWorktree(threadId, worktree) {
      const thread = state.threads.get(threadId);
      if (thread === undefined) return null;
      if (thread.worktree !== null) return thread.worktree;
      state.threads.set(threadId, { ...thread, worktree });
      return worktree;
    },
  };
}
