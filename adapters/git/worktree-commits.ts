import type { GitPlace } from './git-place.ts';
import { inTree } from './git-place.ts';
import { text } from './run-git.ts';
import { NO_DRIVERS, type WorktreeSite } from './worktree-site.ts';

/** The identity of the commits the console makes when the repository configures none. */
export const IDENTITY = { GIT_AUTHOR_NAME: 'Agent console', GIT_AUTHOR_EMAIL: 'console@localhost', GIT_COMMITTER_NAME: 'Agent console', GIT_COMMITTER_EMAIL: 'console@localhost' };

/** git refused to stage what the worktree holds (a path or an attribute an agent wrote); its message is for the log only. */
export class WorktreeUnreadableError extends Error {
  constructor(readonly stderr: string) {
    super(`git could not stage the worktree's files: ${stderr.trim().slice(0, 300)}`);
    this.name = 'WorktreeUnreadableError';
  }
}

/**
 * Stages everything the worktree holds (in `env`'s index, else its own). git refuses some of what an agent
 * can write (a path such as `.GIT/config`, an attribute naming an encoding that fails): that is
 * {@link WorktreeUnreadableError}, not a bug.
 */
export async function addAll(site: WorktreeSite, place: GitPlace, env: Readonly<Record<string, string>> = {}): Promise<void> {
  const added = await site.git([...inTree(place), 'add', '--all', '--', '.'], { env, allow: [128] });
  if (added.code !== 0) throw new WorktreeUnreadableError(added.stderr);
}

/**
 * Commits what a worktree holds on its branch (when anything), as the console; answers whether it committed.
 * Plumbing, onto the branch by name: `git commit` would follow the worktree's HEAD and write COMMIT_EDITMSG
 * in its admin directory, both of which a sandboxed agent can write (a HEAD naming another branch, a
 * COMMIT_EDITMSG made a symbolic link to a file of the service's, which `commit` would overwrite).
 */
export async function commitAll(site: WorktreeSite, place: GitPlace, branch: string, message: string): Promise<boolean> {
  const { git, bare } = site;
  const configured = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0;
  const ref = `refs/heads/${branch}`;
  await addAll(site, place);
  const parent = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
  const staged = (await git([...bare(place), 'diff-index', ...NO_DRIVERS, '--cached', '--quiet', parent, '--'], { allow: [1] })).code === 1;
  if (!staged) return false;
  const tree = text(await git([...bare(place), 'write-tree']));
  const commit = text(await git([...bare(place), 'commit-tree', tree, '-p', parent, '-m', message], { env: configured ? {} : IDENTITY }));
  await git([...bare(place), 'update-ref', ref, commit, parent]);
  return true;
}

/**
 * Moves a thread's branch from `from` to `to` with its worktree's index and files (keeping what differs
 * locally, as `reset --keep` would), when the branch is still at `from`. The branch by name, never through
 * the worktree's HEAD: its admin directory is a sandboxed agent's to write.
 */
export async function moveBranch(site: WorktreeSite, place: GitPlace, branch: string, from: string, to: string): Promise<void> {
  const { git, bare } = site;
  const ref = `refs/heads/${branch}`;
  const at = await git([...bare(place), 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { allow: [1, 128] });
  if (at.code !== 0 || text(at) !== from) return;
  // `-m -u` (the base checkout's is `-u -m`): a fault test stops at this one step by its arguments.
  const moved = await git([...inTree(place), 'read-tree', '-m', '-u', from, to], { allow: [128] });
  if (moved.code === 0) await git([...bare(place), 'update-ref', ref, to, from], { allow: [1, 128] });
}
