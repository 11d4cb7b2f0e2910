import { uuidv7 } from 'uuidv7';
import { checkPendingAnswers } from '../../domain/pending-answers.ts';
import { CONSOLE_CHANNEL, type Address, type Conversation, type Message, type Pending, type Run, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import { QUEUE_LIMIT } from '../../domain/bounds.ts';
import type { ConsoleWriter, DirectiveAnswer, QueuedAnswer, StartedAnswer } from '../../ports/console-writer.ts';
import type { MemoryOutbox } from './delivery-outbox.ts';
import { enqueue, memoryDirectiveQueue, queueOf } from './directive-queue.ts';
import { appendEvent } from './event-log.ts';
import { threadActivity, type MemoryState } from './state.ts';

// Atomicity in memory: every method checks and writes without an `await` in between, so no other
// call can interleave with it on the one JavaScript thread.

/** The console's writes over the memory state. */
export function memoryConsoleWriter(state: MemoryState, outbox: MemoryOutbox): ConsoleWriter {
  const findByKey = (owner: string, key: string): Thread | null => {
    for (const thread of state.threads.values()) if (thread.owner === owner && thread.key === key) return thread;
    return null;
  };
  const firstConversation = (threadId: string): Conversation | undefined =>
    [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? -1 : 1))[0];
  const latestConversation = (threadId: string): Conversation | undefined =>
    [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? 1 : -1))[0];
  const requireThread = (threadId: string): Thread => {
    const thread = state.threads.get(threadId);
    if (thread === undefined) throw new Error(`No thread ${threadId}`);
    return thread;
  };
  const newConversation = (
    threadId: string,
    fields: { agent: string; model: string | null; permission_mode: string | null; effort: string | null; address?: Address | null; id?: string },
  ): Conversation => {
    const { address, id = uuidv7(), ...rest } = fields;
    const thread = requireThread(threadId);
    const conversation: Conversation = {
      id, thread_id: threadId, ...rest, address: address ?? { channel: thread.channel, id: threadId }, turn_running: false, created_at: uuid7Time(id), moved_to: null,
    };
    state.conversations.set(id, conversation);
    return conversation;
  };
  const appendMessage = (threadId: string, fields: { role: string; text: string; artifact_id: string | null }): Message => {
    requireThread(threadId);
    const id = uuidv7();
    const message: Message = { id, role: fields.role, text: fields.text, artifact_id: fields.artifact_id, created_at: uuid7Time(id) };
    state.messages.set(id, { ...message, thread_id: threadId });
    return message;
  };

  /** Keeps a directive's answer for its author's retry with the same `message_id`. */
  const remember = (threadId: string, messageId: string | null, author: string, answer: DirectiveAnswer): void => {
    if (messageId === null) return;
    const answers = state.directives.get(threadId) ?? new Map<string, { author: string; answer: DirectiveAnswer }>();
    answers.set(messageId, { author, answer });
    state.directives.set(threadId, answers);
  };

  return {
    ...memoryDirectiveQueue(state),

    findByKey: async (owner, key) => findByKey(owner, key),

    async createConsoleThread(input) {
      const existing = findByKey(input.owner, input.key);
      if (existing !== null) {
        return { thread: existing, conversation: firstConversation(existing.id) ?? newConversation(existing.id, input.conversation) };
      }
      const id = uuidv7();
      const thread: Thread = {
        id, key: input.key, channel: input.channel ?? CONSOLE_CHANNEL, owner: input.owner, project: input.project, title: input.title,
        fork_of: null, fork_cutoff: null, created_at: uuid7Time(id), worktree: null,
      };
      state.threads.set(id, thread);
      state.members.set(id, new Set());
      return { thread, conversation: newConversation(id, input.conversation) };
    },

    async setWorktree(threadId, worktree) {
      const thread = state.threads.get(threadId);
      if (thread === undefined) return null;
      if (thread.worktree !== null) return thread.worktree;
      state.threads.set(threadId, { ...thread, worktree });
      return worktree;
    },

    async writeMove(move) {
      const source = requireThread(move.source_thread_id);
      const latest = latestConversation(source.id);
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
        thread = { id, key: null, ...fields, fork_of: source.id, fork_cutoff: cutoff, created_at: uuid7Time(id), worktree: null };
        state.threads.set(id, thread);
        // Whoever could read the source reads where it went: its members, and the mover.
        state.members.set(id, new Set([...(state.members.get(source.id) ?? []), ...members].filter((user) => user !== thread.owner)));
      }
      let conversation = newConversation(thread.id, move.conversation);
      if (move.moving !== null) {
        const moving = state.conversations.get(move.moving)!;
        const address = conversation.address!;
        state.conversations.set(moving.id, { ...moving, address, moved_to: { thread_id: thread.id, conversation_id: conversation.id, address } });
        // The agent's session goes with the conversation: its next turn there continues it.
        const session = state.sessions.get(moving.id);
        if (session !== undefined) state.sessions.set(conversation.id, session);
      }
      if (move.ledger !== null) appendMessage(source.id, { role: 'system', text: move.ledger, artifact_id: null });
      if (move.landing_ledger !== null) appendMessage(thread.id, { role: 'system', text: move.landing_ledger, artifact_id: null });
      if (move.delivery !== null) outbox.enqueue(move.delivery);
      const events = [appendEvent(state, source.id, 'gateway', move.gateway)];
      if (move.landing !== null) events.push(appendEvent(state, thread.id, 'gateway', move.gateway));
      let run: Run | null = null;
      if (move.turn !== null) {
        const message = appendMessage(thread.id, { role: 'user', text: move.turn.text, artifact_id: null });
        const runId = uuidv7();
        run = { id: runId, conversation_id: conversation.id, directory: move.turn.directory, status: 'running', error: null, started_at: uuid7Time(runId), ended_at: null };
        state.runs.set(runId, run);
        conversation = { ...conversation, turn_running: true };
        state.conversations.set(conversation.id, conversation);
        state.turns.set(conversation.id, { run_id: runId, holder: move.turn.lease.holder, expires: Date.now() + move.turn.lease.ms });
        events.push(appendEvent(state, thread.id, 'message', { run_id: runId, message }));
      }
      return { kind: 'moved', thread, conversation, events, run };
    },

    async writeDirective(write) {
      const seen = write.message_id === null ? undefined : state.directives.get(write.thread_id)?.get(write.message_id);
      if (seen !== undefined) return seen.author === write.author ? { kind: 'repeated', answer: seen.answer } : { kind: 'message_id_taken' };
      const conversation = state.conversations.get(write.conversation_id);
      if (conversation === undefined || conversation.thread_id !== write.thread_id) {
        throw new Error(`No conversation ${write.conversation_id} on thread ${write.thread_id}`);
      }
      if (conversation.moved_to !== null) return { kind: 'moved_away', moved_to: conversation.moved_to };
      const thread = requireThread(write.thread_id);
      // The thread's, not the conversation's: a summon's turn runs on the conversation that replaced this one.
      const running = threadActivity(state, write.thread_id).turn_running;
      const waiting = queueOf(state, write.thread_id).length;
      if (running || waiting > 0) {
        const whenBusy = write.when_busy ?? null;
        if (whenBusy === null) return running ? { kind: 'busy' } : { kind: 'queue_not_empty' };
        if (latestConversation(write.thread_id)?.id !== conversation.id) return { kind: 'changed' };
        if (waiting >= QUEUE_LIMIT) return { kind: 'queue_full' };
        const first = whenBusy.mode === 'interrupt';
        const { item, event } = enqueue(state, {
          thread_id: thread.id, conversation_id: conversation.id, text: write.text, author: whenBusy.author, first,
          directory: write.directory, permission_mode: write.permission_mode,
        });
        const answer: QueuedAnswer = { thread_id: thread.id, key: thread.key, conversation_id: conversation.id, queued: { id: item.id, position: item.position } };
        remember(thread.id, write.message_id, write.author, answer);
        const turn = first ? [...state.conversations.values()].find((c) => c.thread_id === thread.id && c.turn_running) : undefined;
        const interrupts = turn === undefined ? null : state.turns.get(turn.id)?.run_id ?? null;
        return { kind: 'queued', answer, item, event, interrupts };
      }
      if (latestConversation(write.thread_id)?.id !== conversation.id) return { kind: 'changed' };
      const message = appendMessage(write.thread_id, { role: 'user', text: write.text, artifact_id: null });
      const runId = uuidv7();
      const run: Run = {
        id: runId, conversation_id: conversation.id, directory: write.directory, status: 'running', error: null,
        started_at: uuid7Time(runId), ended_at: null,
      };
      state.runs.set(runId, run);
      state.conversations.set(conversation.id, {
        ...conversation, permission_mode: write.permission_mode ?? conversation.permission_mode, turn_running: true,
      });
      state.turns.set(conversation.id, { run_id: runId, holder: write.lease.holder, expires: Date.now() + write.lease.ms });
      const answer: StartedAnswer = { thread_id: thread.id, key: thread.key, conversation_id: conversation.id, run_id: runId };
      remember(thread.id, write.message_id, write.author, answer);
      const event = appendEvent(state, thread.id, 'message', { run_id: runId, message });
      // The prompt is the run's first model message, and `run_started` the event after the directive's, written with them.
      const promptId = uuidv7();
      state.modelMessages.set(promptId, { id: promptId, run_id: runId, role: 'user', content: write.text, created_at: uuid7Time(promptId) });
      const runStarted = appendEvent(state, thread.id, 'run_started', { run_id: runId, conversation_id: conversation.id });
      return { kind: 'started', answer, message, run, event, runStarted, sessionId: state.sessions.get(conversation.id) ?? null };
    },

    async setPermissionMode(conversationId, mode) {
      const conversation = state.conversations.get(conversationId);
      if (conversation === undefined) return null;
      const updated = { ...conversation, permission_mode: mode };
      state.conversations.set(conversationId, updated);
      return updated;
    },

    async setSession(conversationId, sessionId) {
      if (!state.conversations.has(conversationId)) return;
      if (sessionId === null) state.sessions.delete(conversationId);
      else state.sessions.set(conversationId, sessionId);
    },

    sessionOf: async (conversationId) => state.sessions.get(conversationId) ?? null,

    appendMessage: async (threadId, message) => appendMessage(threadId, message),

    async appendModelMessage(runId, fields) {
      if (!state.runs.has(runId)) throw new Error(`No run ${runId}`);
      const id = uuidv7();
      const message = { id, run_id: runId, role: fields.role, content: fields.content, created_at: uuid7Time(id) };
      state.modelMessages.set(id, message);
      return message;
    },

    async addPending(fields) {
      if (!state.conversations.has(fields.conversation_id)) throw new Error(`No conversation ${fields.conversation_id}`);
      const pending: Pending = { id: uuidv7(), ...fields };
      state.pending.set(pending.id, pending);
      return pending;
    },

    async answerPending(threadId, answers) {
      const onThread = new Map<string, Pending>();
      for (const item of state.pending.values()) {
        if (state.conversations.get(item.conversation_id)?.thread_id === threadId) onThread.set(item.id, item);
      }
      const issues = checkPendingAnswers(onThread, answers);
      if (issues.length > 0) return { ok: false, issues };
      for (const answer of answers) {
        const runId = onThread.get(answer.id)?.run_id;
        state.pending.delete(answer.id);
        if (runId) state.pendingAnswers.set(answer.id, { run_id: runId, answer });
      }
      return { ok: true };
    },

    pendingAnswers: async (pendingIds) => pendingIds.flatMap((id) => {
      const stored = state.pendingAnswers.get(id);
      return stored === undefined ? [] : [stored.answer];
    }),

    async finishRun(runId, status, error) {
      const run = state.runs.get(runId);
      if (run === undefined) throw new Error(`No run ${runId}`);
      if (run.status !== 'running') return run;
      const ended: Run = { ...run, status, error, ended_at: new Date().toISOString() };
      state.runs.set(runId, ended);
      for (const item of [...state.pending.values()]) if (item.run_id === runId) state.pending.delete(item.id);
      for (const [id, stored] of [...state.pendingAnswers]) if (stored.run_id === runId) state.pendingAnswers.delete(id);
      return ended;
    },

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
