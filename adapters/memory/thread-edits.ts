import type { ThreadEdits } from '../../ports/thread-edits.ts';
import type { MemoryState } from './state.ts';

/** The owner's edits of a thread over the memory state: checked and written without an `await` in between. */
export function memoryThreadEdits(state: MemoryState): ThreadEdits {
  return {
    async editThread(owner, threadId, changes) {
      const thread = state.threads.get(threadId);
      if (thread === undefined || thread.owner !== owner) return null;
      const edited = {
        ...thread,
        ...(changes.title === undefined ? {} : { title: changes.title }),
        ...(changes.archived === undefined ? {} : { archived: changes.archived }),
      };
      state.threads.set(threadId, edited);
      return edited;
    },
  };
}
