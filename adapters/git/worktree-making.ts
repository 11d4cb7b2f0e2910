import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rename, utimes } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { isBranchName, worktreeBranch } from '../../domain/worktree.ts';
import { driverOverrides, WORKTREE_CONFIG, type GitPlace } from './git-place.ts';
import { recover } from './merge-journal.ts';
import { listed, THREAD_ID, type WorktreeSite } from './worktree-site.ts';

/** The place of the worktree at `path` when it is one (a directory git holds there, with `branch` and a `.git`); else null. */
async function found(site: WorktreeSite, repo: string, threadId: string, path: string, branch: string): Promise<GitPlace | null> {
  if (!(await lstat(path).then((s) => s.isDirectory(), () => false))) return null;
  // No `.git` at all: a directory that is no worktree (a crash between its making and its checkout, junk), made again.
  if (!(await lstat(join(path, '.git')).then(() => true, () => false))) return null;
  await mkdir(site.empty, { recursive: true });
  return site.places.find(repo, threadId, path, branch);
}

async function checkRepository(site: WorktreeSite, repo: string, base: string): Promise<Failure | null> {
  const dir = await site.git(['-C', repo, 'rev-parse', '--absolute-git-dir'], { allow: [128] });
  if (dir.code !== 0) return { code: 'repository_unavailable', detail: `${repo} is not a git repository` };
  const branch = await site.git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${base}^{commit}`], { allow: [1] });
  if (branch.code !== 0) return { code: 'repository_unavailable', detail: `${repo} has no branch ${base}` };
  return null;
}

// The repository itself (`repo`) is the operator's: git finds it there. What it checks out is a branch an agent wrote.
async function make(site: WorktreeSite, repo: string, base: string, from: string | null, threadId: string, path: string, branch: string): Promise<void> {
  const { git, root } = site;
  // What a crash or a failed attempt left: worktrees of this branch elsewhere (a temporary path) or broken at the path.
  await git(['-C', repo, 'worktree', 'prune']);
  for (const entry of await listed(site, ['-C', repo])) {
    if (entry.branch === `refs/heads/${branch}` || resolve(entry.path) === path) {
      await git(['-C', repo, 'worktree', 'remove', '--force', '--force', '--', entry.path], { allow: [128] });
    }
  }
  // Anything else at the path is kept aside, never deleted: it may hold someone's work.
  if (await lstat(path).then(() => true, () => false)) await rename(path, join(root, `.broken-${threadId}-${Date.now()}`));
  // A worktree `remove` refused (its `.git` replaced) is forgotten now that nothing is at its path.
  await git(['-C', repo, 'worktree', 'prune']);
  const temporary = join(root, `.tmp-${threadId}-${randomUUID()}`);
  const exists = (await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allow: [1] })).code === 0;
  const config = [...WORKTREE_CONFIG, ...(await driverOverrides(git, ['-C', repo]))];
  const add = exists
    ? [...config, '-C', repo, 'worktree', 'add', '--quiet', '--', temporary, branch]
    : [...config, '-C', repo, 'worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', temporary, await startPoint(site, repo, base, from)];
  await git(add);
  await git(['-C', repo, 'worktree', 'move', '--', temporary, path]);
}

/** Marks a worktree used now (its directory's times): the clean-up removes those unused for long. */
async function used(worktree: Worktree): Promise<Worktree> {
  const now = new Date();
  await utimes(worktree.path, now, now).catch(() => {});
  return worktree;
}

/** Where a new branch starts: branch `from` when it exists (a fork's parent's), else the base. */
async function startPoint(site: WorktreeSite, repo: string, base: string, from: string | null): Promise<string> {
  if (from === null || !isBranchName(from)) return `refs/heads/${base}`;
  const found = await site.git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${from}^{commit}`], { allow: [1] });
  return found.code === 0 ? `refs/heads/${from}` : `refs/heads/${base}`;
}

/**
 * The thread's worktree (`Worktrees.ensure`), under its lock: one found at its path is repaired (its
 * `.git` put back, an interrupted merge finished) and kept; else it is made at a temporary path and
 * moved into place, after clearing what a crash or a failed attempt left.
 */
export async function ensureWorktree(site: WorktreeSite, input: { readonly repo: string; readonly base: string; readonly threadId: string; readonly from?: string | null }): Promise<Result<Worktree, Failure>> {
  const { repo, base, threadId, from = null } = input;
  if (!THREAD_ID.test(threadId)) throw new Error(`not a thread id: ${threadId}`);
  const path = join(site.root, threadId);
  const branch = worktreeBranch(threadId);
  const worktree: Worktree = { branch, base, path };
  return site.locks.with(threadId, async () => {
    const place = await found(site, repo, threadId, path, branch);
    if (place !== null) {
      if (!(await site.places.repair(place))) return fail({ code: 'worktree_tampered' });
      await recover(site, threadId, place);
      return ok(await used(worktree));
    }
    const refused = await checkRepository(site, repo, base);
    if (refused !== null) return fail(refused);
    await mkdir(site.root, { recursive: true });
    await make(site, repo, base, from, threadId, path, branch);
    if ((await found(site, repo, threadId, path, branch)) === null) throw new Error(`the worktree at ${path} could not be made`);
    return ok(await used(worktree));
  });
}

/** Forgets the worktrees of `repo` whose directories are gone (`Worktrees.prune`). */
export async function pruneWorktrees(site: WorktreeSite, repo: string): Promise<Result<null, Failure>> {
  const pruned = await site.git(['-C', repo, 'worktree', 'prune'], { allow: [128] });
  return pruned.code === 0 ? ok(null) : fail({ code: 'repository_unavailable', detail: `${repo} is not a git repository` });
}
