import type { Logger } from '../../ports/logger.ts';
import type { Failure } from '../../domain/errors.ts';
import type { Conversation, User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import type { EventBus, PendingAnswer } from '../../ports/event-bus.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { PendingItems } from '../../ports/pending-items.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { SetPermissionMode } from '../../ports/posture-writer.ts';
import { isPostureOf } from '../../domain/vocabulary.ts';
import { unavailableFailure, type AgentVocabularies } from '../agents/vocabularies.ts';
import type { Emit } from './emit.ts';

/**
 * Batch answers to pending approvals and questions (atomic: all applied or none), and the posture
 * switch of a conversation, which also reaches a live agent session.
 */
export function answering(deps: {
  /** The thread and conversation checks, the answers' write, the session a posture reaches, and the posture's write. */
  readonly storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: PendingItems & Pick<RunRecords, 'sessionOf'> & { readonly setPermissionMode: SetPermissionMode } };
  readonly bus: EventBus;
  readonly runner: AgentRunner;
  readonly vocabularies: AgentVocabularies;
  readonly emit: Emit;
  readonly log: Logger;
}) {
  const { storage, bus, runner, log } = deps;
  return {
    async answer(user: User, threadId: string, answers: readonly PendingAnswer[]): Promise<Result<{ answered: number }, Failure>> {
      const thread = await storage.threads.findRow(user.id, threadId);
      if (thread === null) return fail({ code: 'thread_unavailable' });
      const applied = await storage.writer.answerPending(threadId, answers);
      if (!applied.ok) {
        return fail({
          code: 'validation_failed',
          errors: applied.issues.map((issue) => ({ path: `body.responses.${issue.index}`, message: issue.message })),
        });
      }
      // The agent waiting on these may run on another instance: the signal reaches it there.
      await bus.signal({ kind: 'pending_answered', answers });
      return ok({ answered: answers.length });
    },

    async setPermissionMode(user: User, conversationId: string, mode: string): Promise<Result<Conversation, Failure>> {
      const conversation = await storage.conversations.findForUser(user.id, conversationId);
      if (conversation === null) return fail({ code: 'conversation_unavailable' });
      // The row alone: only its owner is checked.
      const thread = await storage.threads.findRow(user.id, conversation.thread_id);
      if (thread?.owner !== user.id) return fail({ code: 'not_thread_owner' });
      // Checked against what the agent advertises, narrowed by the catalog (waited for only while nothing is known).
      const known = await deps.vocabularies.one(conversation.agent, true);
      if (known?.unavailable != null) return fail(unavailableFailure([known]));
      if (known?.offered == null || !isPostureOf(known.offered, mode)) {
        const unsaid = known !== null && known.offered === null ? ' (nothing is known yet of what it offers)' : '';
        return fail({ code: 'validation_failed', errors: [{ path: 'body.permission_mode', message: `is not a permission mode of ${conversation.agent}${unsaid}` }] });
      }
      const { agent } = known;
      const updated = await storage.writer.setPermissionMode(conversationId, mode);
      if (updated === null) return fail({ code: 'conversation_unavailable' });
      const session = await storage.writer.sessionOf(conversationId);
      // The posture is stored; a live session hears it now if it can (every later prompt sets it anyway),
      // so an agent that fails or does not answer cannot fail or hold this request. A refusal is an event.
      if (session !== null) {
        void runner
          .setMode(agent, session, mode)
          .then((refusal) =>
            refusal === null ? null : deps.emit(conversation.thread_id, 'posture_refused', { run_id: null, conversation_id: conversationId, ...refusal }),
          )
          .catch((error: unknown) => log.warn({ err: error }, 'set_mode on a live session failed'));
      }
      return ok(updated);
    },
  };
}

export type Answering = ReturnType<typeof answering>;
