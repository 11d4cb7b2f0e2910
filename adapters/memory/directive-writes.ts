import { uuidv7 } from 'uuidv7';
import { QUEUE_LIMIT } from '../../domain/bounds.ts';
import type { Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { DirectiveAnswer, DirectiveOutcome, DirectiveWrite, DirectiveWrites, QueuedAnswer, StartedAnswer, SteeredAnswer } from '../../ports/directive-writes.ts';
import { openThread, threadByKey } from './console-threads.ts';
import { appendEvent } from './event-log.ts';
import { enqueue, queueOf } from './queue-edits.ts';
import { threadActivity, type MemoryState } from './state.ts';
import { appendLedgerMessage, latestConversation, requireThread } from './write-helpers.ts';

/**
 * Directives over the memory state: the checks (a `message_id` seen, moved away, busy, the latest
 * conversation) and every write with no `await` in between, so a directive is whole to any other call.
 */
export function memoryDirectiveWrites(state: MemoryState): DirectiveWrites {
  /** Keeps a directive's answer for its author's retry with the same `message_id`. */
  const remember = (threadId: string, messageId: string | null, author: string, answer: DirectiveAnswer): void => {
    if (messageId === null) return;
    const answers = state.directives.get(threadId) ?? new Map<string, { author: string; answer: DirectiveAnswer }>();
    answers.set(messageId, { author, answer });
    state.directives.set(threadId, answers);
  };

  /** The answer kept for a `message_id`: its author's to repeat, or another's. */
  const kept = (threadId: string, messageId: string | null, author: string) => {
    const seen = messageId === null ? undefined : state.directives.get(threadId)?.get(messageId);
    if (seen === undefined) return null;
    return seen.author === author ? { kind: 'repeated' as const, answer: seen.answer } : { kind: 'message_id_taken' as const };
  };

  return {
    async keptAnswer(threadId, messageId, author) {
      return kept(threadId, messageId, author);
    },

    async writeSteered(write) {
      const seen = kept(write.thread_id, write.message_id, write.author);
      if (seen !== null) return seen;
      const thread = requireThread(state, write.thread_id);
      const message = appendLedgerMessage(state, write.thread_id, { role: 'user', text: write.text, artifact_id: null });
      const modelId = uuidv7();
      state.modelMessages.set(modelId, { id: modelId, run_id: write.run_id, role: 'user', content: write.text, created_at: uuid7Time(modelId) });
      const answer: SteeredAnswer = { thread_id: thread.id, key: thread.key, conversation_id: write.conversation_id, run_id: write.run_id, steered: true };
      remember(thread.id, write.message_id, write.author, answer);
      const event = appendEvent(state, thread.id, 'steered', { run_id: write.run_id, message });
      return { kind: 'steered', answer, message, event };
    },

    writeDirective: async (write) => writeDirective(write),

    async openThreads(openings) {
      // Every key checked before anything is written: all are opened together, in one turn of the event loop.
      const free = openings.map((o) => threadByKey(state, o.thread.owner, o.thread.key) === null && !state.threads.has(o.thread.key));
      const seen = new Set<string>();
      return openings.map((opening, index) => {
        const key = `${opening.thread.owner}\u0000${opening.thread.key}`;
        if (!free[index] || seen.has(key)) return null;
        seen.add(key);
        const { thread, conversation } = openThread(state, opening.thread);
        const started = writeDirective({
          thread_id: thread.id, conversation_id: conversation.id, message_id: opening.message_id, author: thread.owner, text: opening.text,
          directory: opening.directory, permission_mode: null, lease: opening.lease, when_busy: null, origin: opening.origin,
        });
        if (started.kind !== 'started') throw new Error(`A new thread's first directive was ${started.kind}`);
        return { thread, conversation: state.conversations.get(conversation.id)!, started };
      });
    },
  };

  function writeDirective(write: DirectiveWrite): DirectiveOutcome {
      const seen = write.message_id === null ? undefined : state.directives.get(write.thread_id)?.get(write.message_id);
      if (seen !== undefined) return seen.author === write.author ? { kind: 'repeated', answer: seen.answer } : { kind: 'message_id_taken' };
      const conversation = state.conversations.get(write.conversation_id);
      if (conversation === undefined || conversation.thread_id !== write.thread_id) {
        throw new Error(`No conversation ${write.conversation_id} on thread ${write.thread_id}`);
      }
      if (conversation.moved_to !== null) return { kind: 'moved_away', moved_to: conversation.moved_to };
      const thread = requireThread(state, write.thread_id);
      // The thread's, not the conversation's: a summon's turn runs on the conversation that replaced this one.
      const running = threadActivity(state, write.thread_id).turn_running;
      const waiting = queueOf(state, write.thread_id).length;
      if (running || waiting > 0) {
        const whenBusy = write.when_busy ?? null;
        if (whenBusy === null) return running ? { kind: 'busy' } : { kind: 'queue_not_empty' };
        if (latestConversation(state, write.thread_id)?.id !== conversation.id) return { kind: 'changed' };
        if (waiting >= QUEUE_LIMIT) return { kind: 'queue_full' };
        const first = whenBusy.mode === 'interrupt';
        const { item, event } = enqueue(state, {
          thread_id: thread.id, conversation_id: conversation.id, text: write.text, author: whenBusy.author, first,
          directory: write.directory, permission_mode: write.permission_mode, origin: write.origin ?? null,
        });
        const answer: QueuedAnswer = { thread_id: thread.id, key: thread.key, conversation_id: conversation.id, queued: { id: item.id, position: item.position } };
        remember(thread.id, write.message_id, write.author, answer);
        const turn = first ? [...state.conversations.values()].find((c) => c.thread_id === thread.id && c.turn_running) : undefined;
        const interrupts = turn === undefined ? null : state.turns.get(turn.id)?.run_id ?? null;
        return { kind: 'queued', answer, item, event, interrupts };
      }
      if (latestConversation(state, write.thread_id)?.id !== conversation.id) return { kind: 'changed' };
      const message = appendLedgerMessage(state, write.thread_id, { role: 'user', text: write.text, artifact_id: null, origin: write.origin ?? null });
      const runId = uuidv7();
      const run: Run = {
        id: runId, conversation_id: conversation.id, directory: write.directory, status: 'running', error: null,
        started_at: uuid7Time(runId), ended_at: null, rewound: false,
      };
      state.runs.set(runId, run);
      state.runMessages.set(runId, message.id);
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
  }
}
