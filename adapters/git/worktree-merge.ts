import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { MergeStrategy } from '../../ports/worktrees.ts';
import { inTree, type GitPlace } from './git-place.ts';
import { journalOf, moving, recover, writeJournal, type MergeJournal } from './merge-journal.ts';
import { text } from './run-git.ts';
import { commitAll, IDENTITY, moveBranch } from './worktree-commits.ts';
import { checkoutOf, onPlace, type WorktreeSite } from './worktree-site.ts';
import { commonDirOf, isClone, pushRef, remoteUnavailable } from './remote-access.ts';
import { pushBranch } from './remote-push.ts';

/**
 * Why the base's checkout did not take a merge: `base_moved` when the base is only moving (its ref is no
 * longer `old`, or another merge into it is under way: the checkout's index lags its ref for a moment),
 * else `base_checkout_dirty` (uncommitted changes, or files in the way).
 */
async function movedOrDirty(site: WorktreeSite, threadId: string, ref: string, old: string, place: GitPlace, checkout: GitPlace): Promise<'base_moved' | 'base_checkout_dirty'> {
  const now = await site.git([...site.bare(place), 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { allow: [1] });
  if (now.code !== 0 || text(now) !== old || (await moving(site, threadId, ref, checkout))) return 'base_moved';
  return 'base_checkout_dirty';
}

/**
 * The lock key of a base branch of a repository: merges of several threads into one base take it in turn,
 * so each reads the base the one before left (a compare-and-swap alone refused all but the first `base_moved`).
 */
const baseKey = (common: string, ref: string) => `base-${createHash('sha256').update(`${common}\0${ref}`).digest('hex').slice(0, 32)}`;

/**
 * Commits what the worktree holds, then merges its branch into its base with plumbing (`merge-tree`,
 * `commit-tree`, a compare-and-swap `update-ref`), under the thread's lock (`Worktrees.merge`; the caller's
 * `recheck` asked first, under it), and from
 * reading the base on, under its base's lock (thread first, then base: one order), so merges into one
 * base from instances sharing the directory follow one another; the compare-and-swap still refuses
 * `base_moved` when another writer moved it meanwhile (a push, another machine's instance). What
 * follows the ref's move (the base's checkout, a squashed branch) is journaled first, so a crash's is
 * finished by the thread's next call (merge-journal.ts).
 */
export function mergeWorktree(
  site: WorktreeSite,
  worktree: Worktree,
  input: { readonly message: string; readonly strategy: MergeStrategy; readonly recheck?: () => Promise<Failure | null> },
): Promise<Result<{ readonly commit: string; readonly base: string }, Failure>> {
  const { git, bare, maxListBytes } = site;
  const { message, strategy } = input;
  return site.locks.with(basename(worktree.path), () => onPlace(site, worktree, async (place) => {
    // The caller's last word, now that no restore of this thread can run meanwhile: refused, nothing is committed nor merged.
    const refused = input.recheck === undefined ? null : await input.recheck();
    if (refused !== null) return fail(refused);
    const threadId = basename(worktree.path);
    await recover(site, threadId, place);
    const identity = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0 ? {} : IDENTITY;
    // What the worktree holds, committed on its branch first.
    await commitAll(site, place, worktree.branch, message);
    // The branch by name, never the worktree's HEAD (its admin directory is a sandboxed agent's to write).
    const head = text(await git([...bare(place), 'rev-parse', '--verify', `refs/heads/${worktree.branch}^{commit}`]));
    const ref = `refs/heads/${worktree.base}`;
    const common = await commonDirOf(site, place);
    return site.locks.with(baseKey(common, ref), async () => {
      const old = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
      // No index either: merge-tree reads attributes from the work tree and the index, and a merge driver they name would run.
      const noIndex = join(tmpdir(), `console-no-index-${randomUUID()}`);
      const merged = await git([...bare(place), 'merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', old, head], { allow: [1], maxBytes: maxListBytes, env: { GIT_INDEX_FILE: noIndex } });
      const parts = merged.stdout.toString('utf8').split('\0');
      if (merged.code === 1) {
        const files: string[] = [];
        for (const part of parts.slice(1)) {
          if (part === '') break;
          if (!files.includes(part)) files.push(part);
        }
        return fail({ code: 'merge_conflict', files });
      }
      const tree = parts[0]!.trim();
      // Nothing to bring (merged already): the base stays as it is, with no empty commit.
      if (tree === text(await git([...bare(place), 'rev-parse', `${old}^{tree}`]))) return ok({ commit: old, base: worktree.base });
      const parents = strategy === 'merge' ? ['-p', old, '-p', head] : ['-p', old];
      const commit = text(await git([...bare(place), 'commit-tree', tree, ...parents, '-m', message], { env: identity }));
      // A checkout of the base moves with it, as a push with updateInstead does: only when it is clean.
      const checkout = await checkoutOf(site, place, ref);
      if (checkout !== null) {
        const dirty = text(await git([...inTree(checkout), 'status', '--porcelain', '--untracked-files=no', '--ignore-submodules=all']));
        if (dirty !== '') return fail({ code: await movedOrDirty(site, threadId, ref, old, place, checkout) });
      }
      // A clone's base is the remote's: pushed first, a compare-and-swap on what it held (another instance's merge
      // meanwhile wins: `base_moved`); a remote not reached is the remote's absence, as for any other use of it.
      if (isClone(site, common)) {
        const pushed = await pushRef(site, common, ref, old, commit);
        if (pushed === 'unreachable') return fail(await remoteUnavailable(site, common, 'push'));
        if (pushed === 'rejected') return fail({ code: 'base_moved' });
      }
      const journal = journalOf(site, threadId);
      const entry: MergeJournal = { at: worktree.path, ref, old, commit, head, strategy, checkout: checkout?.workTree ?? null, ...(checkout === null ? {} : { checkoutGitDir: checkout.gitDir }) };
      await writeJournal(site, threadId, entry);
      const swapped = await git([...bare(place), 'update-ref', '-m', `console: ${strategy} ${worktree.branch}`, ref, commit, old], { allow: [1, 128] });
      if (swapped.code !== 0) {
        await rm(journal, { force: true });
        return fail({ code: 'base_moved' });
      }
      if (checkout !== null) {
        const moved = await git([...inTree(checkout), 'read-tree', '-u', '-m', old, commit], { allow: [128] });
        if (moved.code !== 0) {
          // Files in the way: the base goes back to where it was, and the checkout keeps what it had.
          await git([...bare(place), 'update-ref', ref, old, commit], { allow: [1, 128] });
          await rm(journal, { force: true });
          const code = await movedOrDirty(site, threadId, ref, old, place, checkout);
          return fail(code === 'base_moved' ? { code } : { code, detail: 'Files in the checkout of the base branch are in the way of the merge; nothing was merged' });
        }
      }
      // A squash leaves the branch beside the base: it moves to the squashed commit (the worktree holds
      // nothing uncommitted now), so the thread goes on from what was merged and shows no changes.
      if (strategy === 'squash') await moveBranch(site, place, worktree.branch, head, commit);
      // Where the other instances find it (the squashed commit, or the commit of what the worktree held): the branch on
      // the remote moved too, so theirs follow it (worktree-restore.ts); the next turn's end pushes it otherwise.
      if (isClone(site, common)) await pushBranch(site, common, worktree.branch);
      await rm(journal, { force: true });
      return ok({ commit, base: worktree.base });
    });
  }));
}
