import type { Failure } from '../../domain/errors.ts';
import { checkpointRefs, worktreeBranch } from '../../domain/worktree.ts';
import { TRAILER, trailer, withTrailer } from './checkpoint-trailers.ts';
import { fetchedLatestRef, known, latestRef, pushRef, remoteCommand, type Pushed } from './remote-access.ts';
import { text } from './run-git.ts';
import { NO_DRIVERS, type WorktreeSite } from './worktree-site.ts';
import { IDENTITY } from './worktree-commits.ts';

/**
 * A thread's work pushed to its project's remote (contract section 8): each turn's checkpoint with the thread's branch
 * and the remote's pointer to its latest, as one compare-and-swap; a loser of a race rebuilt on the winner's, or set
 * aside and told; a branch pushed with a lease.
 */

/**
 * Pushes the thread's checkpoint `ref` to the remote of clone `common`, atomically with the thread's branch and the
 * remote's pointer to its latest checkpoint, each with a lease on what this clone last fetched of it: a
 * compare-and-swap, so of two instances racing after a crash one wins, and the other is told (`rejected`).
 */
export async function pushCheckpoint(site: WorktreeSite, common: string, threadId: string, ref: string, head?: string): Promise<Pushed> {
  const { config, env, timeoutMs } = remoteCommand();
  const branch = `refs/heads/${worktreeBranch(threadId)}`;
  const commit = text(await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', `${ref}^{commit}`]));
  const tip = head ?? text(await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', `${branch}^{commit}`]));
  const leases = [
    `--force-with-lease=${branch}:${await known(site, common, `refs/remotes/origin/${worktreeBranch(threadId)}`)}`,
    `--force-with-lease=${latestRef(threadId)}:${await known(site, common, fetchedLatestRef(threadId))}`,
  ];
  const pushed = await site.git([`--git-dir=${common}`, ...config, 'push', '--quiet', '--atomic', '--porcelain', ...leases, 'origin',
    `${tip}:${branch}`, `${ref}:${ref}`, `${commit}:${latestRef(threadId)}`], { env, timeoutMs, allow: [1, 128] });
  if (pushed.code !== 0) return pushed.code === 128 ? 'unreachable' : 'rejected';
  await site.git([`--git-dir=${common}`, 'update-ref', `refs/remotes/origin/${worktreeBranch(threadId)}`, tip]);
  await site.git([`--git-dir=${common}`, 'update-ref', fetchedLatestRef(threadId), commit]);
  return 'pushed';
}

/** `checkpoint_set_aside` for the checkpoint `ref` of the thread, naming where it is kept. */
export const setAside = (threadId: string, ref: string): Failure => ({ code: 'checkpoint_set_aside', detail:
  `another instance moved the thread on the remote and this checkpoint could not be put on top of its: it is kept on this instance as ${setAsideRef(threadId, ref.slice(checkpointRefs(threadId).length))}; the thread goes on from the other's` });

/** How a checkpoint's push ended: taken (as it was, or rebuilt on the remote's latest), set aside, or not reached. */
export type CheckpointPushed = 'pushed' | 'set-aside' | 'unreachable';

/** Where a checkpoint that could not be put on the remote is kept, on this instance: never the thread's, never lost. */
export const setAsideRef = (threadId: string, name: string): string => `refs/console/rejected/${threadId}/${name}`;

/**
 * Pushes the thread's checkpoint `ref` (pushCheckpoint); refused (another instance's turn moved the thread on the
 * remote since), rebuilt once on the remote's latest and pushed again: its tree merged with the latest's (a
 * three-way `merge-tree`, as commits), its parent the latest, its branch whichever of the two holds the other.
 * Where that cannot be (the files conflict, the branches diverged) or is refused again, the checkpoint is set aside
 * on `setAsideRef` and leaves the thread's: the caller tells (`checkpoint_set_aside`), nothing is dropped.
 */
export async function pushOrRebuild(site: WorktreeSite, common: string, threadId: string, ref: string): Promise<CheckpointPushed> {
  const first = await pushCheckpoint(site, common, threadId, ref);
  if (first !== 'rejected') return first;
  const own = text(await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', `${ref}^{commit}`]));
  const rebuilt = await rebuildOnRemote(site, common, threadId, own);
  if (rebuilt === 'unreachable') return 'unreachable';
  if (rebuilt !== null) {
    await site.git([`--git-dir=${common}`, 'update-ref', ref, rebuilt.commit, own]);
    const again = await pushCheckpoint(site, common, threadId, ref, rebuilt.head);
    if (again !== 'rejected') return again;
  }
  await site.git([`--git-dir=${common}`, 'update-ref', setAsideRef(threadId, ref.slice(checkpointRefs(threadId).length)), own]);
  await site.git([`--git-dir=${common}`, 'update-ref', '-d', ref]);
  return 'set-aside';
}

/** The checkpoint `own` rebuilt on the remote's latest (fetched first), with the branch to push; null where it cannot be. */
async function rebuildOnRemote(site: WorktreeSite, common: string, threadId: string, own: string): Promise<{ readonly commit: string; readonly head: string } | null | 'unreachable'> {
  const { git } = site;
  const { config, env, timeoutMs } = remoteCommand();
  const name = worktreeBranch(threadId);
  const at = [`--git-dir=${common}`];
  // Exit 1: a checkpoint ref that differs here is kept as it is; the rest came.
  const fetched = await git([...at, ...config, 'fetch', '--quiet', '--no-tags', 'origin', `+refs/heads/${name}:refs/remotes/origin/${name}`,
    `${checkpointRefs(threadId)}*:${checkpointRefs(threadId)}*`, `+refs/console/latest/${threadId}/*:refs/console/origin-latest/${threadId}/*`], { env, timeoutMs, allow: [1, 128] });
  if (fetched.code === 128) return 'unreachable';
  const holds = async (older: string, newer: string) => (await git([...at, 'merge-base', '--is-ancestor', older, newer], { allow: [1, 128] })).code === 0;
  const ours = text(await git([...at, 'rev-parse', '--verify', `refs/heads/${name}^{commit}`]));
  const theirs = await known(site, common, `refs/remotes/origin/${name}`);
  // The branch: ours where it holds the remote's, the remote's where it holds ours; two that diverged are not rebuilt.
  const head = theirs === '' || (await holds(theirs, ours)) ? ours : (await holds(ours, theirs)) ? theirs : null;
  if (head === null) return null;
  // Behind the remote's: the branch here follows it now (nothing of its own is lost, the remote's holds it), so a
  // push tried again later never takes the remote's back (the worktree follows at its next use: worktree-restore.ts).
  if (head !== ours) await git([...at, 'update-ref', `refs/heads/${name}`, head, ours]);
  const latest = await known(site, common, fetchedLatestRef(threadId));
  let tree = text(await git([...at, 'rev-parse', '--verify', `${own}^{tree}`]));
  if (latest !== '' && !(await holds(latest, own))) {
    // Exit 1: the two turns changed one file differently; 128: nothing in common. Either way, not rebuilt.
    const merged = await git([...at, 'merge-tree', '--write-tree', '--no-messages', own, latest], { allow: [1, 128], maxBytes: site.maxListBytes });
    if (merged.code !== 0) return null;
    tree = merged.stdout.toString('utf8').split('\n')[0]!.trim();
  }
  const message = (await git([...at, 'cat-file', 'commit', own])).stdout.toString('utf8').replace(/^[\s\S]*?\n\n/, '');
  const parent = latest !== '' ? latest : text(await git([...at, 'rev-parse', '--verify', `${own}^`]));
  const seq = latest === '' ? Number(trailer(message, TRAILER.seq)) : Number(trailer((await git([...at, 'cat-file', 'commit', latest])).stdout.toString('utf8'), TRAILER.seq)) + 1;
  // Its files changed count against the checkpoint it now follows, as a checkpoint taken there would.
  const changed = await git([...at, 'diff-tree', ...NO_DRIVERS, '-r', '-z', '--no-renames', '--name-only', parent, tree], { maxBytes: site.maxListBytes });
  const files = changed.stdout.toString('utf8').split('\0').filter((name) => name !== '').length;
  const rewritten = withTrailer(withTrailer(withTrailer(message, TRAILER.seq, String(Number.isInteger(seq) ? seq : 1)), TRAILER.head, head), TRAILER.files, String(files));
  const configured = (await git([...at, 'config', 'user.email'], { allow: [1] })).code === 0;
  const commit = text(await git([...at, 'commit-tree', tree, '-p', parent, '-m', rewritten], { env: configured ? {} : IDENTITY }));
  return { commit, head };
}

/** Pushes the thread's branch `branch` as this clone holds it, with a lease on what it last fetched of it; answers how it went. */
export async function pushBranch(site: WorktreeSite, common: string, branch: string): Promise<Pushed> {
  const ours = text(await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', `refs/heads/${branch}^{commit}`]));
  const pushed = await pushRef(site, common, `refs/heads/${branch}`, await known(site, common, `refs/remotes/origin/${branch}`), ours);
  if (pushed === 'pushed') await site.git([`--git-dir=${common}`, 'update-ref', `refs/remotes/origin/${branch}`, ours]);
  return pushed;
}
