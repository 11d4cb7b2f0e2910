import { uuidv7 } from 'uuidv7';
import type { Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { MoveWrites } from '../../ports/move-writes.ts';
import type { MemoryOutbox } from './delivery-outbox.ts';
import { appendEvent } from './event-log.ts';
import { queueOf } from './queue-edits.ts';
import { threadActivity, type MemoryState } from './state.ts';
import { appendLedgerMessage, latestConversation, newConversation, requireThread } from './write-helpers.ts';

/**
 * Teleports and summons over the memory state: the checks and every write of a move with no `await`
 * in between, so a move is whole to any other call. A chat destination's delivery goes into `outbox`
 * in the same step.
 */
export function memoryMoveWrites(state: MemoryState, outbox: MemoryOutbox): MoveWrites {
  return {
    async writeMove(move) {
      const source = requireThread(state, move.source_thread_id);
      const latest = latestConversation(state, source.id);
      if (latest?.moved_to != null) return { kind: 'moved_away', moved_to: latest.moved_to };
      const activity = threadActivity(state, source.id);
      const busy = { turnRunning: activity.turn_running, approvals: activity.approvals, questions: activity.questions, queued: queueOf(state, source.id).length };
      if (busy.turnRunning || busy.approvals > 0 || busy.questions > 0 || busy.queued > 0) return { kind: 'busy', busy };
      const expected = move.moving ?? move.replaces;
      if (expected !== null && latest?.id !== expected) return { kind: 'changed' };
      const landingAddress = move.landing === null ? null : move.conversation.address;
      if (landingAddress !== null && [...state.conversations.values()].some((c) => c.moved_to === null && c.address?.channel === landingAddress.channel && c.address.id === landingAddress.id)) {
        return { kind: 'occupied' };
      }
      let thread = source;
      if (move.landing !== null) {
        const { id, conversation: _, members, ...fields } = move.landing;
        // A fork of the source at its latest visible message: its own newest, or what it inherits up to its cutoff.
        const own = [...state.messages.values()].filter((m) => m.thread_id === source.id).map((m) => m.id);
        const cutoff = [...own, ...(source.fork_of === null ? [] : [source.fork_cutoff])].reduce<string | null>((max, m) => (m !== null && (max === null || m > max) ? m : max), null);
        thread = { id, key: null, ...fields, fork_of: source.id, fork_cutoff: cutoff, created_at: uuid7Time(id), worktree: null, archived: false };
        state.threads.set(id, thread);
        // Whoever could read the source reads where it went: its members, and the mover.
        state.members.set(id, new Set([...(state.members.get(source.id) ?? []), ...members].filter((user) => user !== thread.owner)));
      }
      let conversation = newConversation(state, thread.id, move.conversation);
      if (move.moving !== null) {
        const moving = state.conversations.get(move.moving)!;
        const address = conversation.address!;
        state.conversations.set(moving.id, { ...moving, address, moved_to: { thread_id: thread.id, conversation_id: conversation.id, address } });
        // The agent's session goes with the conversation: its next turn there continues it.
        const session = state.sessions.get(moving.id);
        if (session !== undefined) state.sessions.set(conversation.id, session);
      }
      if (move.ledger !== null) appendLedgerMessage(state, source.id, { role: 'system', text: move.ledger, artifact_id: null });
      if (move.landing_ledger !== null) appendLedgerMessage(state, thread.id, { role: 'system', text: move.landing_ledger, artifact_id: null });
      if (move.delivery !== null) outbox.enqueue(move.delivery);
      const events = [appendEvent(state, source.id, 'gateway', move.gateway)];
      if (move.landing !== null) events.push(appendEvent(state, thread.id, 'gateway', move.gateway));
      let run: Run | null = null;
      if (move.turn !== null) {
        const message = appendLedgerMessage(state, thread.id, { role: 'user', text: move.turn.text, artifact_id: null });
        const runId = uuidv7();
        run = { id: runId, conversation_id: conversation.id, directory: move.turn.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null, rewound: false };
        state.runs.set(runId, run);
        state.runMessages.set(runId, message.id);
        conversation = { ...conversation, turn_running: true };
        state.conversations.set(conversation.id, conversation);
        state.turns.set(conversation.id, { run_id: runId, holder: move.turn.lease.holder, expires: Date.now() + move.turn.lease.ms });
        events.push(appendEvent(state, thread.id, 'message', { run_id: runId, message }));
      }
      return { kind: 'moved', thread, conversation, events, run };
    },
  };
}
