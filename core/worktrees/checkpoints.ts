import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { Checkpoint } from '../../domain/worktree.ts';
import type { Logger } from '../../ports/logger.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import type { TurnCheckpoint } from '../runs/turn-types.ts';

/**
 * Records a turn's checkpoint (contract section 11): before a thread's first turn (`runId` null) and at the end of
 * every turn, of the run's directory when it is the thread's worktree (a plain project's directory has none). Never
 * throws and never fails the turn: a checkpoint that cannot be taken is logged.
 */
export function turnCheckpoints(deps: { readonly worktrees: Pick<Worktrees, 'checkpoint'>; readonly log: Logger }): TurnCheckpoint {
  return async ({ threadId, runId, messageId, directory }) => {
    if (directory === null) return;
    try {
      const recorded = await deps.worktrees.checkpoint({ threadId, path: directory, runId, messageId });
      // Set aside (another instance's turn beat it to the remote, and it could not be put on top): never silent.
      if (!recorded.ok && recorded.error.code === 'checkpoint_set_aside') deps.log.error({ thread: threadId, run: runId, code: recorded.error.code, detail: recorded.error.detail }, 'the checkpoint of a turn was set aside: another instance\'s is the thread\'s');
      else if (!recorded.ok) deps.log.warn({ thread: threadId, run: runId, code: recorded.error.code, detail: recorded.error.detail }, 'the checkpoint of a turn could not be recorded');
    } catch (error) {
      deps.log.warn({ err: error, thread: threadId, run: runId }, 'the checkpoint of a turn could not be recorded');
    }
  };
}

/**
 * A thread's checkpoints (GET /threads/{id}/checkpoints), oldest first: read by its owner and members (404 for
 * anyone else); a thread with no worktree (not a repository project, or no turn yet) has none.
 */
export function threadCheckpoints(deps: {
  readonly storage: { readonly threads: Pick<ThreadStore, 'findRow'> };
  readonly worktrees: Pick<Worktrees, 'checkpoints'>;
  readonly runDirectory: RunDirectory;
}) {
  return async function checkpoints(user: User, threadId: string): Promise<Result<Checkpoint[], Failure>> {
    const thread = await deps.storage.threads.findRow(user.id, threadId);
    if (thread === null) return fail({ code: 'thread_unavailable' });
    if (thread.worktree === null) return ok([]);
    // Checked (and repaired: removed by hand, or by the clean-up) before it is read, as a changes read does.
    const located = await deps.runDirectory(thread);
    if (!located.ok) return located;
    return deps.worktrees.checkpoints({ ...thread.worktree, path: located.value });
  };
}

export type ThreadCheckpoints = ReturnType<typeof threadCheckpoints>;
