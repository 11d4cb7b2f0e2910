import { randomUUID } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkpointRefs, isBranchName, isRepositoryUrl, worktreeBranch } from '../../domain/worktree.ts';
import { noteUnpushed, unpushed } from './current-checkpoint.ts';
import { CLONE_TIMEOUT_MS, cloneOf, remoteCommand, unavailable } from './remote-access.ts';
import { pushOrRebuild, setAside } from './remote-push.ts';
import { text } from './run-git.ts';
import type { WorktreeSite } from './worktree-site.ts';

/**
 * Projects whose `repo` is a git URL (contract section 8, "More than one machine"): each instance keeps a bare clone
 * of its own at `<root>/.repos/<hash of the URL>.git`, fetched before a thread's worktree is used, and pushes a
 * thread's branch with its checkpoint at the end of every turn, and a merged base. The remote is where the work
 * lives; `DATA_DIR` is a cache an instance may lose.
 */

/**
 * The repository a project's `repo` names on this instance: a path as it is; a URL's clone, made when missing and
 * fetched (its branches as `origin/…`, the thread's checkpoints as they are), with the local `base` and the thread's
 * branch brought to the remote's where nothing here holds them ahead. `repository_unavailable` when the remote
 * cannot be reached: nothing then runs, or is read, on a copy that may be stale.
 */
export async function localRepository(site: WorktreeSite, repo: string, input: { readonly base: string; readonly threadId: string | null }): Promise<Result<string, Failure>> {
  if (!isRepositoryUrl(repo)) return ok(repo);
  const { git } = site;
  const { config, env, timeoutMs } = remoteCommand();
  const dir = cloneOf(site, repo);
  if (!(await lstat(dir).then(() => true, () => false))) {
    await mkdir(join(site.root, '.repos'), { recursive: true });
    const temporary = join(site.root, '.repos', `.tmp-${randomUUID()}`);
    try {
      const cloned = await git([...config, 'clone', '--bare', '--quiet', '--no-tags', '--', repo, temporary], { env, timeoutMs: CLONE_TIMEOUT_MS, allow: [128] });
      if (cloned.code !== 0) return fail(unavailable(repo, 'clone'));
      await git([`--git-dir=${temporary}`, 'config', 'remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*']);
      // Two callers at once: the first rename wins, the other's clone goes (below).
      await rename(temporary, dir).catch(() => {});
    } finally {
      // A clone that failed, timed out or lost the race leaves nothing behind.
      await rm(temporary, { recursive: true, force: true });
    }
  }
  const specs = ['+refs/heads/*:refs/remotes/origin/*'];
  if (input.threadId !== null) specs.push(`${checkpointRefs(input.threadId)}*:${checkpointRefs(input.threadId)}*`, `+refs/console/latest/${input.threadId}/*:refs/console/origin-latest/${input.threadId}/*`);
  // Exit 1: a checkpoint ref that differs here (a turn of a crashed instance, never pushed) is kept as it is; the rest came.
  // A checkpoint of this instance's the remote did not take yet (it was not reached at the turn's end): pushed first.
  const owed = input.threadId === null ? null : await unpushed(site, input.threadId);
  // Refused there (another instance's turn moved the thread since): rebuilt on the remote's latest, else set aside and
  // told, never dropped; either way the thread goes on from the remote's latest.
  if (owed !== null) {
    const pushed = await pushOrRebuild(site, dir, input.threadId!, owed);
    if (pushed === 'unreachable') return fail(unavailable(repo, 'push'));
    await noteUnpushed(site, input.threadId!, null);
    if (pushed === 'set-aside') return fail(setAside(input.threadId!, owed));
  }
  const fetched = await git([`--git-dir=${dir}`, ...config, 'fetch', '--quiet', '--no-tags', 'origin', ...specs], { env, timeoutMs, allow: [1, 128] });
  if (fetched.code === 128) return fail(unavailable(repo, 'fetch'));
  const branches = [input.base, ...(input.threadId === null ? [] : [worktreeBranch(input.threadId)])].filter(isBranchName);
  // Both sides of every branch in one read (the common case moves nothing, so it costs one git process, not four).
  const commits = await commitsOf(site, dir, branches.flatMap((branch) => [`refs/remotes/origin/${branch}`, `refs/heads/${branch}`]));
  for (const branch of branches) {
    const theirs = commits.get(`refs/remotes/origin/${branch}`);
    if (theirs === undefined) continue;
    const ours = commits.get(`refs/heads/${branch}`);
    // The base follows the remote's (nothing here commits on it but a merge, which pushes it); a thread's branch is
    // made from the remote's when missing (a checkpoint restore moves it where the latest checkpoint says, and a
    // worktree that holds the latest follows the remote's when a merge moved it: worktree-restore.ts).
    if (ours === undefined || (branch === input.base && ours !== theirs)) await git([`--git-dir=${dir}`, 'update-ref', `refs/heads/${branch}`, theirs]);
  }
  return ok(dir);
}

/** The commits these refs of clone `dir` name, by ref: a ref that is missing, or names no commit, is left out. */
async function commitsOf(site: WorktreeSite, dir: string, refs: readonly string[]): Promise<Map<string, string>> {
  const listed = await site.git([`--git-dir=${dir}`, 'for-each-ref', '--format=%(objecttype) %(objectname) %(refname)', ...refs]);
  const wanted = new Set(refs);
  const commits = new Map<string, string>();
  for (const line of text(listed).split('\n')) {
    const [type, commit, ref] = line.split(' ', 3);
    // A pattern also lists the refs below it (`main` lists `main/x`): the asked-for ones only.
    if (type === 'commit' && commit !== undefined && ref !== undefined && wanted.has(ref)) commits.set(ref, commit);
  }
  return commits;
}
