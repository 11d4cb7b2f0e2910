import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkpointRefs, rewoundRef } from '../../domain/worktree.ts';
import { copyPlain, inTree, type GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import { addAll, IDENTITY } from './worktree-commits.ts';
import { snapshot } from './worktree-changes.ts';
import { listed, writeCheckpoint, type Listed } from './worktree-checkpoints.ts';
import { onPlace, type WorktreeSite } from './worktree-site.ts';
import { currentCheckpoint, noteCurrent } from './current-checkpoint.ts';
import { commonDirOf, fetchedLatestRef, isClone } from './remote-access.ts';

/** The create-only old value of `update-ref`. */
const NO_COMMIT = '0'.repeat(40);

/**
 * Puts the files of the worktree at `place` from what they are now to tree `target`: a snapshot through a temporary
 * index (as a checkpoint is made), then a two-tree `read-tree -u -m` (ignored files it names are overwritten, others
 * left alone). The worktree's own index is not touched.
 */
async function filesTo(site: WorktreeSite, place: GitPlace, ref: string, target: string): Promise<Result<null, Failure>> {
  const { git, bare } = site;
  const index = join(tmpdir(), `console-index-${randomUUID()}`);
  try {
    if (!(await copyPlain(join(place.gitDir, 'index'), index))) await git([...bare(place), 'read-tree', ref], { env: { GIT_INDEX_FILE: index } });
    await addAll(site, place, { GIT_INDEX_FILE: index });
    const now = text(await git([...bare(place), 'write-tree'], { env: { GIT_INDEX_FILE: index } }));
    if (now === target) return ok(null);
    const moved = await git([...inTree(place), 'read-tree', '-u', '-m', '--exclude-per-directory=.gitignore', now, target], { env: { GIT_INDEX_FILE: index }, allow: [128] });
    return moved.code === 0 ? ok(null) : fail({ code: 'worktree_unreadable', detail: moved.stderr.slice(0, 500) });
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}

/**
 * Puts the worktree at `place` back to `checkpoint` (call it holding the thread's lock): the files from what they are
 * now (a snapshot through a temporary index, as a checkpoint is made) to the checkpoint's tree with a two-tree
 * `read-tree -u -m` (ignored files it names are overwritten, others left alone); the branch at the commit it was at
 * when the checkpoint was taken, the tip it leaves kept on `keep`; HEAD on the branch; the index its tree. Each step
 * is idempotent: a call after a crash finishes what one began.
 */
export async function restoreAt(site: WorktreeSite, place: GitPlace, worktree: Worktree, checkpoint: Listed, keep: string): Promise<Result<null, Failure>> {
  const { git, bare } = site;
  const ref = `refs/heads/${worktree.branch}`;
  const target = text(await git([...bare(place), 'rev-parse', '--verify', `${checkpoint.commit}^{tree}`]));
  const files = await filesTo(site, place, ref, target);
  if (!files.ok) return files;
  const tip = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
  const head = checkpoint.head !== null && (await git([...bare(place), 'cat-file', '-e', `${checkpoint.head}^{commit}`], { allow: [1, 128] })).code === 0 ? checkpoint.head : tip;
  if (head !== tip) {
    // What the branch held stays reachable (never deleted): kept once, before the branch moves.
    await git([...bare(place), 'update-ref', keep, tip, NO_COMMIT], { allow: [1, 128] });
    await git([...bare(place), 'update-ref', ref, head, tip]);
  }
  await git([...bare(place), 'symbolic-ref', 'HEAD', ref]);
  // The index the branch's tree, its stat cache refreshed from the files: what differs reads as uncommitted, as it was.
  await git([...bare(place), 'read-tree', head]);
  await git([...inTree(place), 'update-index', '-q', '--refresh'], { allow: [1] });
  await noteCurrent(site, basename(worktree.path), checkpoint.commit);
  return ok(null);
}

/** Puts the thread's worktree back to one of its checkpoints (`Worktrees.restore`), under the thread's lock. */
export function restoreWorktree(site: WorktreeSite, worktree: Worktree, input: { readonly commit: string; readonly runId: string }): Promise<Result<null, Failure>> {
  const threadId = basename(worktree.path);
  return site.locks.with(threadId, () => onPlace(site, worktree, async (place) => {
    // Only a checkpoint of this thread's: what its refs list.
    const checkpoint = (await listed(site, place, threadId)).find((candidate) => candidate.commit === input.commit);
    if (checkpoint === undefined) return fail({ code: 'checkpoint_unavailable', detail: `${input.commit} is no checkpoint of thread ${threadId}` });
    // Put back already (its record is there): a second settle of one rewind (the rewind's own, and a turn's that began
    // meanwhile) must not take back what that turn has written since.
    const record = await site.git([...site.bare(place), 'rev-parse', '--verify', '--quiet', `${checkpointRefs(threadId)}rewind-${input.runId}`], { allow: [1] });
    if (record.code === 0) return ok(null);
    const restored = await restoreAt(site, place, worktree, checkpoint, rewoundRef(threadId, input.runId));
    if (!restored.ok) return restored;
    // The state put back is the thread's latest from now on, on every instance: recorded (and pushed on a clone) as a
    // checkpoint of its own, once (a repeated restore finds it). A push that fails is the thread's next use's to retry.
    const tree = text(await site.git([...site.bare(place), 'rev-parse', '--verify', `${checkpoint.commit}^{tree}`]));
    await writeCheckpoint(site, place, threadId, { runId: null, messageId: null, tree, rewindOf: input.runId });
    return ok(null);
  }, true));
}

/**
 * Brings the worktree at `place` to the thread's latest checkpoint when another instance took it (call it holding
 * the thread's lock): a worktree made here now, or one whose noted checkpoint is not the latest, gets the latest's
 * files, its branch where the instance that took it left it (a clone's: the remote's, which that instance pushed
 * with it or moved since by a merge, then followed with the files merged; a shared repository's: as it is); one
 * found with nothing noted (made before this was kept) is noted as holding the latest. On a clone, a worktree that
 * holds the latest already follows the remote's branch when another instance moved it with no checkpoint (a merge).
 * A thread with no checkpoint is left as it is.
 */
export async function syncToLatest(site: WorktreeSite, place: GitPlace, worktree: Worktree, made: boolean): Promise<Result<null, Failure>> {
  const threadId = basename(worktree.path);
  const all = await listed(site, place, threadId);
  const common = await commonDirOf(site, place);
  // A clone's latest is what the remote's pointer names (the winner of any race); a shared repository's, the last taken.
  const pointer = isClone(site, common)
    ? await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', '--quiet', `${fetchedLatestRef(threadId)}^{commit}`], { allow: [1] })
    : null;
  const named = pointer !== null && pointer.code === 0 ? all.find((checkpoint) => checkpoint.commit === text(pointer)) : undefined;
  const latest = named ?? all.at(-1);
  if (latest === undefined) return ok(null);
  const current = await currentCheckpoint(site, threadId);
  const follow = async (): Promise<Result<null, Failure>> => {
    const followed = isClone(site, common) ? await followRemoteBranch(site, place, worktree, common, latest.head) : ok(true);
    return followed.ok ? ok(null) : followed;
  };
  if (current === latest.commit) return follow();
  if (current === null && !made) {
    await noteCurrent(site, threadId, latest.commit);
    return follow();
  }
  const tip = text(await site.git([...site.bare(place), 'rev-parse', '--verify', `refs/heads/${worktree.branch}^{commit}`]));
  const theirs = isClone(site, common)
    ? await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${worktree.branch}^{commit}`], { allow: [1] })
    : null;
  const head = theirs !== null && theirs.code === 0 ? text(theirs) : null;
  const keep = `refs/console/replaced/${threadId}/${tip}`;
  // The remote's branch moved since the latest checkpoint (a merge through another instance): the checkpoint's files
  // are put back on the commit its branch was at then, when this clone holds it, and follow the remote's branch from
  // there, merged with it. Put on the remote's branch as they are, a squash's base changes read as taken back.
  const then = head !== null && latest.head !== null && latest.head !== head
    && (await site.git([...site.bare(place), 'cat-file', '-e', `${latest.head}^{commit}`], { allow: [1, 128] })).code === 0 ? latest.head : null;
  const restored = await restoreAt(site, place, worktree, { ...latest, head: then ?? head }, keep);
  if (!restored.ok || then === null) return restored;
  const followed = await followRemoteBranch(site, place, worktree, common, then);
  if (!followed.ok) return followed;
  // A merge that conflicts: the checkpoint's files on the remote's branch, as before any was followed.
  return followed.value ? ok(null) : restoreAt(site, place, worktree, { ...latest, head }, keep);
}

/**
 * Moves the thread's branch of clone `common` to the remote's when another instance moved it there with no checkpoint
 * (a merge: the squashed commit, or the commit of what its worktree held), with the files: what the worktree holds
 * now (the latest checkpoint's, and whatever was written here since) is merged with the remote's branch, as
 * commits, with `merge-tree` (no work tree nor index: no driver runs), so nothing local is lost and nothing merged
 * reads as changed again. Only a branch where the latest checkpoint (`at`, its branch then) left it follows, or one the
 * remote's is ahead of; one moved here since is left for its push. Answers false when the merge conflicts: the
 * worktree and its branch are left as they are.
 */
async function followRemoteBranch(site: WorktreeSite, place: GitPlace, worktree: Worktree, common: string, at: string | null): Promise<Result<boolean, Failure>> {
  const { git, bare } = site;
  const ref = `refs/heads/${worktree.branch}`;
  const tracking = `refs/remotes/origin/${worktree.branch}`;
  // Both in one process: this runs before every turn and read of a current worktree.
  const refs = new Map(text(await git([`--git-dir=${common}`, 'for-each-ref', '--format=%(refname) %(objectname)', ref, tracking]))
    .split('\n').map((line) => line.split(' ') as [string, string]));
  const theirs = refs.get(tracking);
  const tip = refs.get(ref);
  if (theirs === undefined || tip === undefined || tip === theirs) return ok(true);
  // Ahead of the remote's (a commit not pushed yet), or moved here since the latest checkpoint (a merge here whose
  // push of the branch failed, a sweep's commit): this instance's own, for its next push; never taken back.
  if ((await git([...bare(place), 'merge-base', '--is-ancestor', theirs, tip], { allow: [1] })).code === 0) return ok(true);
  if (tip !== at && (await git([...bare(place), 'merge-base', '--is-ancestor', tip, theirs], { allow: [1] })).code !== 0) return ok(true);
  const configured = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0;
  // What the worktree holds, as a commit on the branch here (never written to a ref): one side of the merge.
  const ours = text(await git([...bare(place), 'commit-tree', await snapshot(site, place, worktree.branch), '-p', tip, '-m', 'What the worktree holds'], { env: configured ? {} : IDENTITY }));
  const noIndex = join(tmpdir(), `console-no-index-${randomUUID()}`);
  // Exit 1: a conflict; 128: nothing in common (a branch pushed over from elsewhere). Either way, left as it is.
  const merged = await git([...bare(place), 'merge-tree', '--write-tree', '--no-messages', ours, theirs], { allow: [1, 128], maxBytes: site.maxListBytes, env: { GIT_INDEX_FILE: noIndex } });
  if (merged.code !== 0) return ok(false);
  const target = merged.stdout.toString('utf8').split('\n')[0]!.trim();
  const files = await filesTo(site, place, ref, target);
  if (!files.ok) return files;
  // What the branch held stays reachable (never deleted), then the branch, HEAD and index as the remote's.
  await git([...bare(place), 'update-ref', `refs/console/replaced/${basename(worktree.path)}/${tip}`, tip, NO_COMMIT], { allow: [1, 128] });
  await git([...bare(place), 'update-ref', ref, theirs, tip]);
  await git([...bare(place), 'symbolic-ref', 'HEAD', ref]);
  await git([...bare(place), 'read-tree', theirs]);
  await git([...inTree(place), 'update-index', '-q', '--refresh'], { allow: [1] });
  return ok(true);
}
