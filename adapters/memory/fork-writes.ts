import { isInLedger } from '../../domain/ledger-visibility.ts';
import { CONSOLE_CHANNEL, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { ForkWrites } from '../../ports/fork-writes.ts';
import type { MemoryState } from './state.ts';
import { newConversation, requireThread } from './write-helpers.ts';

/** Forks from a message over the memory state: the check and the writes with no `await` in between. */
export function memoryForkWrites(state: MemoryState): ForkWrites {
  return {
    async createFork(fork) {
      requireThread(state, fork.source_thread_id);
      const message = state.messages.get(fork.cutoff);
      if (message === undefined || !isInLedger(fork.visible, message)) return { kind: 'not_in_ledger' };
      const thread: Thread = {
        id: fork.id, key: null, channel: CONSOLE_CHANNEL, owner: fork.owner, project: fork.project, title: fork.title,
        fork_of: fork.source_thread_id, fork_cutoff: fork.cutoff, created_at: uuid7Time(fork.id), worktree: null, archived: false,
      };
      state.threads.set(thread.id, thread);
      state.members.set(thread.id, new Set());
      const conversation = newConversation(state, thread.id, { ...fork.conversation, address: null });
      return { kind: 'forked', thread, conversation };
    },
  };
}
