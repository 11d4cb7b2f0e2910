import type { Failure } from '../../domain/errors.ts';
import { fail, type Result } from '../../domain/result.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import { GitOutputTooLargeError, GitUnavailableError } from './run-git.ts';
import { WorktreeUnreadableError } from './worktree-commits.ts';
import { listCheckpoints, recordCheckpoint } from './worktree-checkpoints.ts';
import { restoreWorktree } from './worktree-restore.ts';
import { worktreeChanges, worktreeDiff, worktreeLines } from './worktree-changes.ts';
import { ensureWorktree, pruneWorktrees } from './worktree-making.ts';
import { mergeWorktree } from './worktree-merge.ts';
import { worktreeSite, type WorktreeSiteOptions } from './worktree-site.ts';
import { sweepWorktrees } from './worktree-sweep.ts';

/** Runs `body`, answering git's absence or time-out as `git_unavailable`. */
async function guarded<T>(body: () => Promise<Result<T, Failure>>): Promise<Result<T, Failure>> {
  try {
    return await body();
  } catch (error) {
    if (error instanceof GitUnavailableError) return fail({ code: 'git_unavailable', detail: error.message });
    if (error instanceof WorktreeUnreadableError) return fail({ code: 'worktree_unreadable' });
    // Only a listing is bounded here: a diff's own bound is answered where it is asked (`diff_too_large`).
    if (error instanceof GitOutputTooLargeError) return fail({ code: 'changes_too_large' });
    throw error;
  }
}

/**
 * Threads' worktrees with the `git` executable (git 2.38 or newer: merges use `merge-tree
 * --write-tree`). Each lives at `<root>/<thread id>` on branch `console/<thread id>`; it is made at
 * a temporary path and moved into place, under a lock per thread (in this process, and a directory
 * under `<root>/.locks` between processes), so a crash or a second instance never leaves a half-made
 * one at its path: the next call repairs whatever it finds. Changes are read from a snapshot of the
 * worktree written through a temporary index (the worktree's own index is never touched); merges
 * are made with plumbing (`merge-tree`, `commit-tree`, a compare-and-swap `update-ref`), so the base
 * is never left half-merged: what follows the ref's move (the base's checkout, a squashed branch) is
 * written first in a journal under `<root>/.merges`, and a crash's is finished by the thread's next call.
 *
 * An agent writes any file of its worktree, `.git` included: git is never let find a worktree's repository
 * or configuration there. Every command on a worktree names the git dir the service found for it in the
 * repository (git-place.ts) and its work tree; commands that need no files of it run with an empty work
 * tree of the service's, so no attribute an agent wrote names a merge driver; filters the repository
 * defines are emptied, diffs never run a textconv or an external diff; a `.git` found replaced is put back.
 *
 * Each part is a file of its own: making and repairing a worktree (worktree-making.ts), removing unused
 * ones (worktree-sweep.ts), reading its changes (worktree-changes.ts), merging it (worktree-merge.ts)
 * with its journal (merge-journal.ts), recording and listing its checkpoints (worktree-checkpoints.ts), putting it back to
 * one (worktree-restore.ts), over what they share (worktree-site.ts, worktree-commits.ts).
 */
export function gitWorktrees(options: WorktreeSiteOptions): Worktrees {
  const site = worktreeSite(options);
  return {
    ensure: (input) => guarded(() => ensureWorktree(site, input)),
    prune: (repo) => guarded(() => pruneWorktrees(site, repo)),
    sweep: (unusedMs) => sweepWorktrees(site, unusedMs),
    changes: (worktree) => guarded(() => worktreeChanges(site, worktree)),
    diff: (worktree, file, maxBytes) => guarded(() => worktreeDiff(site, worktree, file, maxBytes)),
    lines: (worktree, file, from, to) => worktreeLines(site, worktree, file, from, to),
    merge: (worktree, input) => guarded(() => mergeWorktree(site, worktree, input)),
    checkpoint: (input) => guarded(() => recordCheckpoint(site, input)),
    checkpoints: (worktree) => guarded(() => listCheckpoints(site, worktree)),
    restore: (worktree, input) => guarded(() => restoreWorktree(site, worktree, input)),
  };
}
