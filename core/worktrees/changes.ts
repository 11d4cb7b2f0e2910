import type { Failure } from '../../domain/errors.ts';
import type { Thread, User } from '../../domain/model.ts';
import { fail, ok, type Issue, type Result } from '../../domain/result.ts';
import { MAX_DIFF_BYTES, REVIEW_CONTEXT_LINES, reviewPrompt, type Changes, type QuotedComment, type ReviewComment } from '../../domain/worktree.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { QueueEdits } from '../../ports/queue-edits.ts';
import type { RewindWrites } from '../../ports/rewind-writes.ts';
import type { MergeStrategy, Worktrees } from '../../ports/worktrees.ts';
import type { Directive, WhenBusy } from '../runs/directives.ts';

type Answer<T> = Promise<Result<T, Failure>>;

/** A review as its body gives it: comments on lines of changed files, a text before them, and what to do on a busy thread. */
export interface Review {
  readonly comments: readonly ReviewComment[];
  readonly text: string | null;
  readonly message_id: string | null;
  readonly when_busy: WhenBusy | null;
}

/**
 * A thread's changes (contract section 8): read by its owner and members (404 for anyone else),
 * merged into the base by its owner alone while nothing runs or waits, and reviewed with comments
 * that become the thread's next directive. A path asked about is only ever one of the listed files.
 */
export function threadChanges(deps: {
  /** The thread, its conversations, its queue (a merge waits for an empty one), and its rewind not yet restored (a merge yields to it). */
  readonly storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: QueueEdits & Pick<RewindWrites, 'pendingRestore'> };
  readonly worktrees: Worktrees;
  readonly runDirectory: RunDirectory;
  readonly submit: (user: User, ref: string, body: Directive) => Answer<DirectiveAnswer>;
  /**
   * Told of every merge done (the webhooks' `merged`, WebhookStore.enqueue). A merge is git's, not a database
   * write: this comes after it, and a crash between the two loses the notice, never the merge.
   */
  readonly merged?: (notice: { readonly thread_id: string; readonly commit: string; readonly base: string; readonly strategy: MergeStrategy; readonly by: string }) => Promise<void>;
}) {
  const { storage, worktrees } = deps;

  async function withWorktree(user: User, threadId: string): Answer<Thread & { readonly worktree: NonNullable<Thread['worktree']> }> {
    const thread = await storage.threads.findRow(user.id, threadId);
    if (thread === null) return fail({ code: 'thread_unavailable' });
    if (thread.worktree === null) return fail({ code: 'no_worktree' });
    // Checked (and repaired: removed by hand, or by the clean-up) before it is read, as before a turn.
    const located = await deps.runDirectory(thread);
    if (!located.ok) return located;
    // This instance's worktree: where it found (or made) it, whichever instance recorded the path.
    return ok({ ...thread, worktree: { ...thread.worktree, path: located.value } });
  }

  return {
    async changes(user: User, threadId: string): Answer<Changes> {
      const thread = await withWorktree(user, threadId);
      return thread.ok ? worktrees.changes(thread.value.worktree) : thread;
    },

    /** The diff of one listed file, or of all (`path` null), within 2 MiB. */
    async diff(user: User, threadId: string, path: string | null): Answer<string> {
      const thread = await withWorktree(user, threadId);
      if (!thread.ok) return thread;
      const { worktree } = thread.value;
      if (path === null) return worktrees.diff(worktree, null, MAX_DIFF_BYTES);
      const changes = await worktrees.changes(worktree);
      if (!changes.ok) return changes;
      const file = changes.value.files.find((candidate) => candidate.path === path);
      if (file === undefined) return fail({ code: 'change_unavailable' });
      return worktrees.diff(worktree, file, MAX_DIFF_BYTES);
    },

    async merge(user: User, threadId: string, body: { readonly message: string | null; readonly strategy: MergeStrategy }): Answer<{ commit: string; base: string }> {
      const thread = await withWorktree(user, threadId);
      if (!thread.ok) return thread;
      if (thread.value.owner !== user.id) return fail({ code: 'not_thread_owner' });
      const conversations = await storage.conversations.listByThread(thread.value.id);
      if (conversations.some((conversation) => conversation.turn_running)) return fail({ code: 'turn_running' });
      if ((await storage.writer.queued(thread.value.id)).length > 0) return fail({ code: 'queue_not_empty' });
      const { title, worktree } = thread.value;
      const message = body.message ?? `${title.trim() === '' ? `Console thread ${thread.value.id}` : title.trim()}\n\nFrom ${worktree.branch}.`;
      // Checked again holding the worktree's lock (a rewind's restore takes it too): a rewind written since the checks
      // above, its runs marked and its restore not yet recorded done, wins; else the base would get the work it takes back.
      const recheck = async () => ((await storage.writer.pendingRestore(thread.value.id)) === null ? null : { code: 'rewind_pending' as const });
      const merged = await worktrees.merge(worktree, { message, strategy: body.strategy, recheck });
      if (merged.ok && deps.merged !== undefined) {
        await deps.merged({ thread_id: thread.value.id, commit: merged.value.commit, base: merged.value.base, strategy: body.strategy, by: user.id });
      }
      return merged;
    },

    /** Quotes each comment with the lines around it in a prompt, and sends it as a directive. */
    async review(user: User, threadId: string, body: Review): Answer<DirectiveAnswer> {
      const thread = await withWorktree(user, threadId);
      if (!thread.ok) return thread;
      const { worktree } = thread.value;
      const changes = await worktrees.changes(worktree);
      if (!changes.ok) return changes;
      const issues: Issue[] = [];
      const quoted: QuotedComment[] = [];
      for (const [i, comment] of body.comments.entries()) {
        const file = changes.value.files.find((candidate) => candidate.path === comment.path);
        if (file === undefined) {
          issues.push({ path: `body.comments.${i}.path`, message: 'is not a changed file of this thread' });
          continue;
        }
        const first = Math.max(1, comment.line - REVIEW_CONTEXT_LINES);
        const lines = await worktrees.lines(worktree, file, first, comment.line + REVIEW_CONTEXT_LINES);
        quoted.push({ ...comment, excerpt: lines === null || lines.length === 0 ? null : { first, lines } });
      }
      if (issues.length > 0) return fail({ code: 'validation_failed', errors: issues });
      return deps.submit(user, thread.value.id, {
        text: reviewPrompt(body.text, quoted), message_id: body.message_id, model: null, project: null, permission_mode: null, effort: null, when_busy: body.when_busy,
      });
    },
  };
}

export type ThreadChanges = ReturnType<typeof threadChanges>;
