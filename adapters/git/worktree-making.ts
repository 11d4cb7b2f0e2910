import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rename, utimes } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { isBranchName, isRepositoryUrl, worktreeBranch } from '../../domain/worktree.ts';
import { driverOverrides, WORKTREE_CONFIG, type GitPlace } from './git-place.ts';
import { recover } from './merge-journal.ts';
import { listed, THREAD_ID, type WorktreeSite } from './worktree-site.ts';
import { text } from './run-git.ts';
import { IDENTITY } from './worktree-commits.ts';
import { syncToLatest } from './worktree-restore.ts';
import { cloneOf } from './remote-access.ts';
import { localRepository } from './remote-clone.ts';

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
async function make(site: WorktreeSite, repo: string, base: string, from: Start, threadId: string, path: string, branch: string): Promise<void> {
  const { git, root } = site;
  // What a crash or a failed attempt left: worktrees of this branch elsewhere under this root (a temporary path) or
  // broken at the path. Another instance's worktree of the thread (under its own root, on this machine) is its own.
  await git(['-C', repo, 'worktree', 'prune']);
  const ours = (at: string) => resolve(at).startsWith(`${root}${sep}`);
  let elsewhere = false;
  for (const entry of await listed(site, ['-C', repo])) {
    if ((entry.branch === `refs/heads/${branch}` && ours(entry.path)) || resolve(entry.path) === path) {
      await git(['-C', repo, 'worktree', 'remove', '--force', '--force', '--', entry.path], { allow: [128] });
    } else if (entry.branch === `refs/heads/${branch}`) elsewhere = true;
  }
  // Anything else at the path is kept aside, never deleted: it may hold someone's work.
  if (await lstat(path).then(() => true, () => false)) await rename(path, join(root, `.broken-${threadId}-${Date.now()}`));
  // A worktree `remove` refused (its `.git` replaced) is forgotten now that nothing is at its path.
  await git(['-C', repo, 'worktree', 'prune']);
  const temporary = join(root, `.tmp-${threadId}-${randomUUID()}`);
  const exists = (await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allow: [1] })).code === 0;
  const config = [...WORKTREE_CONFIG, ...(await driverOverrides(git, ['-C', repo]))];
  const add = exists
    ? [...config, '-C', repo, 'worktree', 'add', '--quiet', ...(elsewhere ? ['--force'] : []), '--', temporary, branch]
    : [...config, '-C', repo, 'worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', temporary, await startPoint(site, repo, base, from, threadId)];
  await git(add);
  await git(['-C', repo, 'worktree', 'move', '--', temporary, path]);
}

/** Marks a worktree used now (its directory's times): the clean-up removes those unused for long. */
async function used(worktree: Worktree): Promise<Worktree> {
  const now = new Date();
  await utimes(worktree.path, now, now).catch(() => {});
  return worktree;
}

/** What a new branch may start from: another thread's checkpoint, a branch. */
interface Start {
  readonly branch: string | null;
  readonly checkpoint: string | null;
}

/**
 * Where a new branch starts: a commit of checkpoint `from.checkpoint`'s files on the commit its thread's branch was
 * at when it was taken (a fork's), when it is a checkpoint; else branch `from.branch` when it exists (a fork's
 * parent's); else the base.
 */
async function startPoint(site: WorktreeSite, repo: string, base: string, from: Start, threadId: string): Promise<string> {
  const { git } = site;
  if (from.checkpoint !== null && /^[0-9a-f]{40,64}$/.test(from.checkpoint)) {
    const found = await git(['-C', repo, 'cat-file', 'commit', from.checkpoint], { allow: [1, 128] });
    const message = found.code === 0 ? found.stdout.toString() : '';
    // Only a checkpoint: what a checkpoint's message says it is.
    if (/^Console-Checkpoint: \d+$/m.test(message)) {
      const head = /^Console-Head: ([0-9a-f]{40,64})$/m.exec(message)?.[1] ?? null;
      const parent = head !== null && (await git(['-C', repo, 'cat-file', '-e', `${head}^{commit}`], { allow: [1, 128] })).code === 0 ? head : from.checkpoint;
      const configured = (await git(['-C', repo, 'config', 'user.email'], { allow: [1] })).code === 0;
      const made = await git(['-C', repo, 'commit-tree', `${from.checkpoint}^{tree}`, '-p', parent, '-m', `Fork ${threadId}: the files of checkpoint ${from.checkpoint}`], { env: configured ? {} : IDENTITY });
      return text(made);
    }
  }
  if (from.branch === null || !isBranchName(from.branch)) return `refs/heads/${base}`;
  const found = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${from.branch}^{commit}`], { allow: [1] });
  return found.code === 0 ? `refs/heads/${from.branch}` : `refs/heads/${base}`;
}

/**
 * The thread's worktree (`Worktrees.ensure`), under its lock: one found at its path is repaired (its
 * `.git` put back, an interrupted merge finished) and kept; else it is made at a temporary path and
 * moved into place, after clearing what a crash or a failed attempt left.
 */
export async function ensureWorktree(
  site: WorktreeSite,
  input: { readonly repo: string; readonly base: string; readonly threadId: string; readonly from?: string | null; readonly fromCheckpoint?: string | null },
): Promise<Result<Worktree, Failure>> {
  const { base, threadId } = input;
  const from: Start = { branch: input.from ?? null, checkpoint: input.fromCheckpoint ?? null };
  if (!THREAD_ID.test(threadId)) throw new Error(`not a thread id: ${threadId}`);
  const path = join(site.root, threadId);
  const branch = worktreeBranch(threadId);
  const worktree: Worktree = { branch, base, path };
  return site.locks.with(threadId, async () => {
    // A URL's clone, fetched: its latest checkpoint of the thread is known before the worktree is looked at.
    const local = await localRepository(site, input.repo, { base, threadId });
    if (!local.ok) return local;
    const repo = local.value;
    const place = await found(site, repo, threadId, path, branch);
    if (place !== null) {
      if (!(await site.places.repair(place))) return fail({ code: 'worktree_tampered' });
      await recover(site, threadId, place);
      // Another instance's turn since this one's last: its latest checkpoint first.
      const synced = await syncToLatest(site, place, worktree, false);
      return synced.ok ? ok(await used(worktree)) : synced;
    }
    const refused = await checkRepository(site, repo, base);
    if (refused !== null) return fail(refused);
    await mkdir(site.root, { recursive: true });
    await make(site, repo, base, from, threadId, path, branch);
    const made = await found(site, repo, threadId, path, branch);
    if (made === null) throw new Error(`the worktree at ${path} could not be made`);
    // A thread another instance worked on: its files as its latest checkpoint holds them, not only what its branch committed.
    const synced = await syncToLatest(site, made, worktree, true);
    return synced.ok ? ok(await used(worktree)) : synced;
  });
}

/** Forgets the worktrees of `repo` whose directories are gone (`Worktrees.prune`). */
export async function pruneWorktrees(site: WorktreeSite, url: string): Promise<Result<null, Failure>> {
  // A URL's clone, when this instance has one: nothing to prune before it does.
  const repo = isRepositoryUrl(url) ? cloneOf(site, url) : url;
  if (isRepositoryUrl(url) && !(await lstat(repo).then(() => true, () => false))) return ok(null);
  // A repository that never had a worktree has nothing to prune: no git process at every start for it.
  if (await neverHadWorktrees(repo)) return ok(null);
  const pruned = await site.git(['-C', repo, 'worktree', 'prune'], { allow: [128] });
  return pruned.code === 0 ? ok(null) : fail({ code: 'repository_unavailable', detail: `${repo} is not a git repository` });
}

/** A repository (a `.git` directory, or a bare one) whose git directory holds no `worktrees/`: git would prune nothing. */
async function neverHadWorktrees(repo: string): Promise<boolean> {
  const isDirectory = (path: string) => lstat(path).then((stat) => stat.isDirectory(), () => false);
  const gitDir = (await isDirectory(join(repo, '.git'))) ? join(repo, '.git') : (await isDirectory(join(repo, 'refs'))) ? repo : null;
  // A `.git` file (the repository is itself a worktree) or no repository at all: git says what it is.
  return gitDir !== null && !(await isDirectory(join(gitDir, 'worktrees')));
}
