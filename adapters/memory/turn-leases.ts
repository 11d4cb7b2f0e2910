import type { TurnLeases } from '../../ports/turn-leases.ts';
import type { MemoryState } from './state.ts';

/**
 * Turns as leases in the memory state (`turns`, by conversation id): release, renewal, the sweepers'
 * exclusive claim of lapsed turns, and the running turn of a thread. A claim checks and takes a
 * turn with no `await` in between, so two sweepers never take the same one.
 */
export function memoryTurnLeases(state: MemoryState): TurnLeases {
  return {
    async releaseTurn(runId) {
      state.unsent.delete(runId);
      for (const [conversationId, turn] of state.turns) {
        if (turn.run_id !== runId) continue;
        state.turns.delete(conversationId);
        const conversation = state.conversations.get(conversationId);
        if (conversation !== undefined) state.conversations.set(conversationId, { ...conversation, turn_running: false });
      }
    },

    async renewTurns(holder, runIds, ms) {
      const held: string[] = [];
      for (const turn of state.turns.values()) {
        if (turn.holder !== holder || turn.run_id === null || !runIds.includes(turn.run_id)) continue;
        turn.expires = Date.now() + ms;
        held.push(turn.run_id);
      }
      return held;
    },

    async claimExpiredTurn(lease) {
      const now = Date.now();
      for (const conversation of state.conversations.values()) {
        if (!conversation.turn_running) continue;
        // A turn with no lease (a world file's running turn) counts as lapsed.
        const turn = state.turns.get(conversation.id) ?? { run_id: null, holder: null, expires: 0 };
        if (turn.expires >= now) continue;
        const runs = [...state.runs.values()].filter((r) => r.conversation_id === conversation.id)
          .sort((a, b) => Number(b.status === 'running') - Number(a.status === 'running') || (a.id < b.id ? 1 : -1));
        const run = turn.run_id === null ? runs[0] : state.runs.get(turn.run_id);
        if (run === undefined) {
          state.turns.delete(conversation.id);
          state.conversations.set(conversation.id, { ...conversation, turn_running: false });
          continue;
        }
        state.turns.set(conversation.id, { run_id: run.id, holder: lease.holder, expires: now + lease.ms });
        return { thread_id: conversation.thread_id, run };
      }
      return null;
    },

    async runningTurn(threadId) {
      const running = [...state.conversations.values()]
        .filter((c) => c.thread_id === threadId && c.turn_running && state.turns.get(c.id)?.run_id)
        .sort((a, b) => (a.id < b.id ? 1 : -1))[0];
      if (running === undefined) return null;
      const turn = state.turns.get(running.id)!;
      return { run_id: turn.run_id!, conversation_id: running.id, holder: turn.holder };
    },
  };
}
