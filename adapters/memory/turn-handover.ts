import { uuidv7 } from 'uuidv7';
import type { Message, Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { DequeuedTurn, TurnHandover } from '../../ports/turn-handover.ts';
import type { TurnLease } from '../../ports/turn-leases.ts';
import { appendEvent } from './event-log.ts';
import { answered, queueOf } from './queue-edits.ts';
import type { MemoryState } from './state.ts';

/**
 * Turns handed over to the queue over the memory state: a turn's end starts the thread's next
 * queued directive in the same step, its prompt kept in `unsent` until its turn takes it. Each
 * method checks and writes without an `await` in between, so a queued item starts exactly once.
 */
export function memoryTurnHandover(state: MemoryState): TurnHandover {
  const running = (threadId: string) => [...state.conversations.values()].some((c) => c.thread_id === threadId && c.turn_running);

  /** Starts the thread's first queued directive on its latest conversation; the thread must be idle. */
  function startNext(threadId: string, lease: TurnLease): DequeuedTurn | null {
    const next = queueOf(state, threadId)[0];
    const thread = state.threads.get(threadId);
    const latest = [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
    // A conversation moved away takes no turn here: the queue waits (moves are refused while it is not empty).
    if (next === undefined || thread === undefined || latest === undefined || latest.moved_to !== null) return null;
    state.queue.delete(next.id);
    const runId = uuidv7();
    const run: Run = {
      id: runId, conversation_id: latest.id, directory: next.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null, rewound: false,
    };
    state.runs.set(runId, run);
    state.runMessages.set(runId, next.message_id);
    const conversation = { ...latest, permission_mode: next.permission_mode ?? latest.permission_mode, turn_running: true };
    state.conversations.set(conversation.id, conversation);
    state.turns.set(conversation.id, { run_id: runId, holder: lease.holder, expires: Date.now() + lease.ms });
    const stored = state.messages.get(next.message_id);
    const message: Message = stored === undefined
      ? { id: next.message_id, role: 'user', text: next.text, artifact_id: null, created_at: uuid7Time(next.message_id), origin: next.origin }
      : { id: stored.id, role: stored.role, text: stored.text, artifact_id: stored.artifact_id, created_at: stored.created_at, origin: stored.origin };
    const item = answered(next, 1);
    const event = appendEvent(state, threadId, 'dequeued', { id: item.id, run_id: runId, conversation_id: conversation.id, message });
    state.unsent.set(runId, { thread_id: threadId, item, message, event });
    return { thread, conversation, run, item, message, event };
  }

  return {
    async handOverTurn(runId, lease) {
      const held = [...state.turns].find(([, turn]) => turn.run_id === runId);
      if (held === undefined) return null;
      const [conversationId] = held;
      state.turns.delete(conversationId);
      state.unsent.delete(runId);
      const conversation = state.conversations.get(conversationId);
      if (conversation === undefined) return null;
      state.conversations.set(conversationId, { ...conversation, turn_running: false });
      return running(conversation.thread_id) ? null : startNext(conversation.thread_id, lease);
    },

    async startIdleQueue(lease) {
      for (const threadId of new Set([...state.queue.values()].map((q) => q.thread_id))) {
        if (running(threadId)) continue;
        const started = startNext(threadId, lease);
        if (started !== null) return started;
      }
      return null;
    },

    async unsentTurn(runId) {
      const unsent = state.unsent.get(runId);
      const run = state.runs.get(runId);
      const thread = unsent === undefined ? undefined : state.threads.get(unsent.thread_id);
      const conversation = run === undefined ? undefined : state.conversations.get(run.conversation_id);
      if (unsent === undefined || run?.status !== 'running' || thread === undefined || conversation === undefined) return null;
      return { thread, conversation, run, item: unsent.item, message: unsent.message, event: unsent.event };
    },

    async takeUnsentPrompt(runId, holder, directory) {
      const held = [...state.turns.values()].some((turn) => turn.run_id === runId && turn.holder === holder);
      const unsent = state.unsent.get(runId);
      if (!held || unsent === undefined) return false;
      state.unsent.delete(runId);
      const run = state.runs.get(runId);
      if (run !== undefined) state.runs.set(runId, { ...run, directory });
      const id = uuidv7();
      state.modelMessages.set(id, { id, run_id: runId, role: 'user', content: unsent.item.text, created_at: uuid7Time(id) });
      return true;
    },
  };
}
