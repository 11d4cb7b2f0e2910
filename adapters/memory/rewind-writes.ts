import type { Message } from '../../domain/model.ts';
import type { RewindWrites, ThreadRun } from '../../ports/rewind-writes.ts';
import type { MemoryState } from './state.ts';
import { appendLedgerMessage, requireThread } from './write-helpers.ts';

/** The runs of the thread's conversations, oldest first. */
export function runsOf(state: MemoryState, threadId: string): ThreadRun[] {
  const conversations = new Set([...state.conversations.values()].filter((c) => c.thread_id === threadId).map((c) => c.id));
  return [...state.runs.values()]
    .filter((run) => conversations.has(run.conversation_id))
    .sort((a, b) => (a.id < b.id ? -1 : 1))
    .map((run) => ({ id: run.id, conversation_id: run.conversation_id, message_id: state.runMessages.get(run.id) ?? null, rewound: run.rewound, ended: run.status !== 'running' }));
}

/** Rewinds over the memory state: the checks and the writes with no `await` in between. */
export function memoryRewindWrites(state: MemoryState): RewindWrites {
  return {
    async threadRuns(threadId) {
      return runsOf(state, threadId);
    },

    async rewind(rewind) {
      requireThread(state, rewind.thread_id);
      const conversations = [...state.conversations.values()].filter((c) => c.thread_id === rewind.thread_id);
      if (conversations.some((c) => c.turn_running)) return { kind: 'turn_running' };
      if ([...state.queue.values()].some((q) => q.thread_id === rewind.thread_id)) return { kind: 'queue_not_empty' };
      const runs = runsOf(state, rewind.thread_id);
      const first = runs.find((run) => run.id === rewind.run_id);
      if (first === undefined) return { kind: 'not_found' };
      if (first.rewound) return { kind: 'rewound_already' };
      const taken = runs.filter((run) => run.id >= first.id && !run.rewound);
      const prompts = new Set(taken.map((run) => run.message_id).filter((id) => id !== null));
      for (const run of taken) state.runs.set(run.id, { ...state.runs.get(run.id)!, rewound: true });
      for (const message of state.messages.values()) {
        if (message.thread_id === rewind.thread_id && (message.id >= first.id || prompts.has(message.id))) state.rewoundMessages.add(message.id);
      }
      for (const conversation of new Set(taken.map((run) => run.conversation_id))) state.sessions.delete(conversation);
      if (rewind.restore !== null) state.rewinds.set(rewind.thread_id, { run_id: rewind.run_id, commit: rewind.restore });
      const note: Message = appendLedgerMessage(state, rewind.thread_id, { role: 'system', text: rewind.note.text, artifact_id: null }, rewind.note.id);
      return { kind: 'rewound', runs: taken.map((run) => run.id), note };
    },

    async pendingRestore(threadId) {
      return state.rewinds.get(threadId) ?? null;
    },

    async restored(threadId, commit) {
      if (state.rewinds.get(threadId)?.commit === commit) state.rewinds.delete(threadId);
    },
  };
}
