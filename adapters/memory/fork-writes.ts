import { isInLedger } from '../../domain/ledger-visibility.ts';
import { CONSOLE_CHANNEL, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import { runOfMessage } from '../../domain/worktree.ts';
import type { ForkWrites } from '../../ports/fork-writes.ts';
import { runsOf } from './rewind-writes.ts';
import type { MemoryState } from './state.ts';
import { newConversation, requireThread } from './write-helpers.ts';

/** Forks from a message over the memory state: the check and the writes with no `await` in between. */
export function memoryForkWrites(state: MemoryState): ForkWrites {
  return {
    async createFork(fork) {
      requireThread(state, fork.source_thread_id);
      const message = state.messages.get(fork.cutoff);
      if (message === undefined || !isInLedger(fork.visible, message)) return { kind: 'not_in_ledger' };
      // Its replies and files are final only once its run ended: a fork at it while it runs, or waits, is refused.
      if ([...state.queue.values()].some((q) => q.thread_id === message.thread_id && q.message_id === message.id)) return { kind: 'queue_not_empty' };
      const run = runOfMessage(runsOf(state, message.thread_id), message.id);
      if (run !== null && !run.ended) return { kind: 'turn_running' };
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
