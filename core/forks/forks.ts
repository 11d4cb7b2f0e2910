import type { Failure } from '../../domain/errors.ts';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { routeId } from '../../domain/vocabulary.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { ForkWrites } from '../../ports/fork-writes.ts';
import type { NewId } from '../../ports/new-id.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import { unavailableFailure, type AgentVocabularies } from '../agents/vocabularies.ts';
import type { Directive } from '../runs/directives.ts';

/** A fork as its body gives it (contract section 11). */
export interface ForkBody {
  /** The message to fork at: the last of the source's ledger the fork sees. */
  readonly message_id: string;
  /** The fork's first directive, or null for none. */
  readonly text: string | null;
  /** A route of the source conversation's agent (`agent:model`, as GET /routes names it), or null: the source's. */
  readonly model: string | null;
}

/** The answer of a fork (201): the new thread, which has no key. */
export interface Forked {
  readonly thread_id: string;
  readonly key: null;
}

/** Why a fork at a message whose run has not ended is refused (ForkOutcome). */
const NOT_FINAL = {
  turn_running: 'The run of that message has not ended: its replies and files are not final. Fork there once it ends, or at an earlier message',
  queue_not_empty: 'That message is a directive still waiting in the queue: fork there once its run has ended, or at an earlier message',
} as const;

const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path, message }] });

/**
 * Fork from a message (contract section 11): anyone who can read a thread makes a new console thread of
 * their own that sees its ledger up to a message (the fork rules of the reads), with a conversation of the
 * source's agent, model (or the body's), posture and effort, and no agent session: its first turn forks the
 * source's where the agent offers that and it is where the fork starts from (./fork-session.ts), else starts a
 * fresh session, which the turn briefs with the history up to the cutoff (core/runs/history.ts). With
 * text, the fork's first directive runs through the directives use case.
 */
export function threadForks(deps: {
  readonly storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: ForkWrites };
  readonly vocabularies: AgentVocabularies;
  readonly newId: NewId;
  /** The directives use case: a fork's text is its first directive. */
  readonly submit: (user: User, ref: string, body: Directive) => Promise<Result<DirectiveAnswer, Failure>>;
}) {
  const { storage } = deps;
  return async function fork(user: User, threadId: string, body: ForkBody): Promise<Result<Forked, Failure>> {
    const found = await storage.threads.findAccessible(user.id, threadId);
    if (found === null) return fail({ code: 'thread_unavailable' });
    // The latest conversation is the one that speaks: the fork continues from it.
    const source = await storage.conversations.latestByThread(threadId);
    if (source === null) return fail({ code: 'no_conversation', detail: 'The thread has no conversation to fork' });
    // Only a model to check waits for what the agent offers; a fork that picks nothing takes the source's as it is.
    const known = await deps.vocabularies.one(source.agent, body.model !== null);
    if (known === null) return fail({ code: 'no_agent_offered', detail: `${source.agent} is no longer an agent of this service` });
    let model = source.model;
    if (body.model !== null) {
      if (known.offered === null && known.unavailable !== null) return fail(unavailableFailure([known]));
      const models = known.offered === null ? [] : known.offered.models.length === 0 ? [null] : known.offered.models;
      const picked = models.find((m) => routeId(source.agent, m) === body.model);
      if (picked === undefined) return fail(invalid('body.model', `is not a route of ${source.agent} (a fork keeps the source's agent)`));
      model = picked;
    }
    const written = await storage.writer.createFork({
      id: deps.newId(),
      owner: user.id,
      source_thread_id: found.row.id,
      cutoff: body.message_id,
      visible: ledgerSegments(found.chain),
      project: found.row.project,
      title: `Fork of ${found.row.title}`.slice(0, 200),
      conversation: { id: deps.newId(), agent: source.agent, model, permission_mode: source.permission_mode, effort: source.effort },
    });
    if (written.kind === 'not_in_ledger') return fail(invalid('body.message_id', "is not a message of this thread's ledger"));
    // The message's run has not ended (or not begun): what it leaves is not known yet, so no fork is cut there.
    if (written.kind !== 'forked') return fail({ code: written.kind, detail: NOT_FINAL[written.kind] });
    const { thread } = written;
    if (body.text !== null) {
      const started = await deps.submit(user, thread.id, { text: body.text, message_id: null, model: null, project: null, permission_mode: null, effort: null });
      // The fork is written: a first directive refused after it (its worktree could not be made) leaves it there, idle.
      if (!started.ok) return started;
    }
    return ok({ thread_id: thread.id, key: null });
  };
}

export type ThreadFork = ReturnType<typeof threadForks>;
