import type { Failure } from '../domain/errors.ts';
import type { Worktree } from '../domain/model.ts';
import type { Result } from '../domain/result.ts';
import type { ChangedFile, Changes, Checkpoint } from '../domain/worktree.ts';

/** How a merge lands: one commit of all the changes on `base` (`squash`), or a merge commit with the branch as its second parent. */
export type MergeStrategy = 'squash' | 'merge';

/**
 * Threads' git worktrees (contract section 8): made and repaired, read as changes against the
 * merge base with their base branch, and merged into it. Refusals are failures (`git_unavailable`,
 * `repository_unavailable`, `checkpoint_set_aside`, `diff_too_large`, `merge_conflict`, `base_checkout_dirty`, `base_moved`,
 * `worktree_tampered`, `worktree_unreadable`); any other trouble throws. An agent writes any file of a
 * worktree: nothing it writes may make an implementation run a command, or read outside the worktree.
 */
export interface Worktrees {
  /**
   * The thread's worktree on branch `console/<thread id>` from `base` of `repo`, at a path of the
   * adapter's choosing: made when missing, repaired when half-made; safe to call again, and from two
   * callers at once (one makes it, the other finds it). A new branch starts from checkpoint `fromCheckpoint` of
   * another thread's when it is given and is one (a fork's: a commit of its files, on the commit its source's branch
   * was at then), else from branch `from` when it is given and exists (a fork's parent's), else from `base`.
   */
  ensure(input: { readonly repo: string; readonly base: string; readonly threadId: string; readonly from?: string | null; readonly fromCheckpoint?: string | null }): Promise<Result<Worktree, Failure>>;
  /** Forgets the worktrees of `repo` whose directories are gone (`git worktree prune`); a repository that cannot be used is left alone. */
  prune(repo: string): Promise<Result<null, Failure>>;
  /**
   * Removes the worktrees not used (made, checked before a turn or a read) for longer than `unusedMs`,
   * each under its thread's lock, after committing what it holds on its branch: nothing is lost, and
   * the thread's next turn makes it again from the branch. Answers the thread ids whose worktree went.
   */
  sweep(unusedMs: number): Promise<string[]>;
  /** What the worktree holds (committed, uncommitted and untracked) against the merge base with its base branch. */
  changes(worktree: Worktree): Promise<Result<Changes, Failure>>;
  /** The unified diff of one changed file (one {@link changes} listed), or of all (null), of at most `maxBytes`. */
  diff(worktree: Worktree, file: ChangedFile | null, maxBytes: number): Promise<Result<string, Failure>>;
  /** Lines `from` to `to` (from 1, inclusive) of a changed file as the worktree holds it; null when it has none (deleted, binary). */
  lines(worktree: Worktree, file: ChangedFile, from: number, to: number): Promise<string[] | null>;
  /**
   * Commits what the worktree holds (if anything) with `message`, then merges its branch into its
   * base without ever leaving the base half-merged: on a conflict nothing of the base changes.
   * `recheck`, when given, is asked first, holding the thread's lock (the one a {@link restore} takes): a failure
   * it answers is the merge's answer, and nothing is committed nor merged. What the caller checked before taking
   * the lock may have changed while it waited (a rewind's marks written, its files not yet put back).
   */
  merge(worktree: Worktree, input: { readonly message: string; readonly strategy: MergeStrategy; readonly recheck?: () => Promise<Failure | null> }): Promise<Result<{ readonly commit: string; readonly base: string }, Failure>>;
  /**
   * Records thread `threadId`'s worktree at `path` (its whole state: tracked, untracked, deletions; ignored files
   * left out) as a commit on `refs/console/checkpoints/<thread id>/<run id>`, its parent the thread's previous
   * checkpoint (else its branch), without touching the worktree's index, HEAD or files. `runId` null records the
   * one before the thread's first turn, only when the thread has none yet. Answers the checkpoint, or null when
   * nothing was recorded (`path` is no worktree of the thread's: a plain project's directory; or the first is there already).
   * On a repository reached by URL the branch and the checkpoint are pushed (a compare-and-swap on the branch); one the
   * remote did not reach is kept here and answered `repository_unavailable` (the thread's next `ensure` here pushes it
   * first). One refused (another instance's was pushed first) is rebuilt on top of that one and pushed again; where it
   * cannot be, it is set aside here (`refs/console/rejected/<thread id>/<run id>`), never dropped, and answered
   * `checkpoint_set_aside` (so is the `ensure` that finds an owed one so).
   */
  checkpoint(input: { readonly threadId: string; readonly path: string; readonly runId: string | null; readonly messageId: string | null }): Promise<Result<Checkpoint | null, Failure>>;
  /** The thread's checkpoints, oldest first. */
  checkpoints(worktree: Worktree): Promise<Result<Checkpoint[], Failure>>;
  /**
   * Puts the worktree back to its checkpoint `commit` (a rewind, contract section 11): its files as the checkpoint
   * holds them (ignored files it does not name left alone), its branch at the commit it was at then (the tip it
   * leaves kept on `refs/console/rewound/<thread id>/<run id>`) and checked out, its index that commit's tree.
   * Safe to call again; refuses `checkpoint_unavailable` for a commit that is no checkpoint of the thread's.
   */
  restore(worktree: Worktree, input: { readonly commit: string; readonly runId: string }): Promise<Result<null, Failure>>;
}
