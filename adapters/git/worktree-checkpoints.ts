import { basename, join, resolve } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkpointRefs, worktreeBranch, type Checkpoint } from '../../domain/worktree.ts';
import type { GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import { snapshot } from './worktree-changes.ts';
import { IDENTITY } from './worktree-commits.ts';
import { noteCurrent, noteUnpushed } from './current-checkpoint.ts';
import { commonDirOf, isClone } from './remote-access.ts';
import { pushOrRebuild, setAside } from './remote-push.ts';
import { TRAILER, trailer } from './checkpoint-trailers.ts';
import { NO_DRIVERS, onPlace, THREAD_ID, type WorktreeSite } from './worktree-site.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The create-only old value of `update-ref`: a checkpoint's ref is written once, never moved. */
const NO_COMMIT = '0'.repeat(40);

/** Only ids go into a message: nothing that could end a trailer line. */
const plainId = (id: string | null): string => (id !== null && /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : '');

/**
 * A checkpoint, its order among the thread's, and the commit its branch was at when it was taken (null for one
 * that did not record it): a rewind puts the branch back there, a fork starts its own from there.
 */
export interface Listed extends Checkpoint {
  readonly seq: number;
  readonly head: string | null;
  /** A rewind's record of the checkpoint it put back (the run it took back first), or null: the thread's latest state, never listed by its API. */
  readonly rewind: string | null;
}

/** The thread's checkpoints, oldest first: one `for-each-ref` over its refs. */
export async function listed(site: WorktreeSite, place: GitPlace, threadId: string): Promise<Listed[]> {
  const out = await site.git([...site.bare(place), 'for-each-ref', '--format=%(objectname)%00%(contents)%00', checkpointRefs(threadId)], { maxBytes: site.maxListBytes });
  const parts = out.stdout.toString('utf8').split('\0');
  const found: Listed[] = [];
  for (let i = 0; i + 1 < parts.length; i += 2) {
    const commit = parts[i]!.trim();
    const message = parts[i + 1]!;
    const seq = Number(trailer(message, TRAILER.seq));
    if (!/^[0-9a-f]{40,64}$/.test(commit) || !Number.isInteger(seq)) continue;
    const run = trailer(message, TRAILER.run) ?? '';
    const messageId = trailer(message, TRAILER.message) ?? '';
    const head = trailer(message, TRAILER.head) ?? '';
    const rewind = trailer(message, TRAILER.rewind) ?? '';
    found.push({
      seq,
      rewind: rewind === '' ? null : rewind,
      head: /^[0-9a-f]{40,64}$/.test(head) ? head : null,
      run_id: run === '' ? null : run,
      message_id: messageId === '' ? null : messageId,
      commit,
      created_at: trailer(message, TRAILER.created) ?? '',
      files_changed: Number(trailer(message, TRAILER.files) ?? 0),
    });
  }
  // Two instances that each took a checkpoint of one turn's end (one of them crashed before its push): the later counts.
  return found.sort((a, b) => a.seq - b.seq || a.created_at.localeCompare(b.created_at));
}

const withoutSeq = ({ seq: _seq, head: _head, rewind: _rewind, ...checkpoint }: Listed): Checkpoint => checkpoint;

/**
 * Records a checkpoint of the thread's worktree (`Worktrees.checkpoint`), under the thread's lock: its tree
 * through a temporary index (worktree-changes.ts's snapshot, with the hardened invocation every read uses),
 * its parent the previous checkpoint (else the branch), its ref created once with plumbing (`commit-tree`,
 * `update-ref`); the worktree's index, HEAD and files are never touched, and no reflog is written.
 */
export async function recordCheckpoint(
  site: WorktreeSite,
  input: { readonly threadId: string; readonly path: string; readonly runId: string | null; readonly messageId: string | null },
): Promise<Result<Checkpoint | null, Failure>> {
  const { threadId, runId } = input;
  // Only a worktree of the adapter's own: a plain project's directory has no checkpoints.
  if (!THREAD_ID.test(threadId) || resolve(input.path) !== join(site.root, threadId)) return ok(null);
  if (runId !== null && plainId(runId) === '') throw new Error(`not a run id: ${runId}`);
  const branch = worktreeBranch(threadId);
  const worktree: Worktree = { branch, base: '', path: join(site.root, threadId) };
  return site.locks.with(threadId, () => onPlace(site, worktree, async (place) => {
    if (runId === null && (await listed(site, place, threadId)).length > 0) return ok(null);
    return writeCheckpoint(site, place, threadId, { runId, messageId: input.messageId, tree: await snapshot(site, place, branch), rewindOf: null });
    // An agent that switched branches or detached HEAD still gets its turn's checkpoint: nothing here reads HEAD.
  }, true));
}

/** The thread's checkpoints, oldest first (`Worktrees.checkpoints`). */
export function listCheckpoints(site: WorktreeSite, worktree: Worktree): Promise<Result<Checkpoint[], Failure>> {
  return onPlace(site, worktree, async (place) => ok((await listed(site, place, basename(worktree.path))).filter((checkpoint) => checkpoint.rewind === null).map(withoutSeq)), true);
}

/**
 * Writes a checkpoint of `tree` for the thread (call it holding the thread's lock, on its worktree's place): its
 * parent the previous checkpoint (else the branch), its ref created once with plumbing (`commit-tree`, `update-ref`),
 * noted as what this instance's worktree holds, and pushed on a clone. `rewindOf`: the record of a rewind's restore
 * (`rewind-<run id>`), so every instance takes the state put back as the thread's latest.
 */
export async function writeCheckpoint(
  site: WorktreeSite,
  place: GitPlace,
  threadId: string,
  input: { readonly runId: string | null; readonly messageId: string | null; readonly tree: string; readonly rewindOf: string | null },
): Promise<Result<Checkpoint | null, Failure>> {
  const { git, bare } = site;
  const { runId, rewindOf } = input;
  const branch = worktreeBranch(threadId);
  const before = await listed(site, place, threadId);
  const previous = before.at(-1);
  const head = text(await git([...bare(place), 'rev-parse', '--verify', `refs/heads/${branch}^{commit}`]));
  const parent = previous?.commit ?? head;
  const tree = input.tree;
  const changed = await git([...bare(place), 'diff-tree', ...NO_DRIVERS, '-r', '-z', '--no-renames', '--name-only', parent, tree], { maxBytes: site.maxListBytes });
  const filesChanged = changed.stdout.toString('utf8').split('\0').filter((name) => name !== '').length;
  const createdAt = new Date().toISOString();
  const seq = (previous?.seq ?? 0) + 1;
  const message = [
    rewindOf !== null ? `Checkpoint put back by the rewind to before run ${rewindOf}` : runId === null ? 'Checkpoint before the first turn' : `Checkpoint after run ${runId}`, '',
    `${TRAILER.seq}: ${seq}`, `${TRAILER.run}: ${plainId(runId)}`, `${TRAILER.message}: ${plainId(input.messageId)}`,
    `${TRAILER.created}: ${createdAt}`, `${TRAILER.files}: ${filesChanged}`, `${TRAILER.head}: ${head}`, ...(rewindOf === null ? [] : [`${TRAILER.rewind}: ${plainId(rewindOf)}`]), '',
  ].join('\n');
  const configured = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0;
  let commit = text(await git([...bare(place), 'commit-tree', tree, '-p', parent, '-m', message], { env: configured ? {} : IDENTITY }));
  const name = rewindOf !== null ? `rewind-${plainId(rewindOf)}` : runId ?? 'base';
  const ref = `${checkpointRefs(threadId)}${name}`;
  // Created once: a run checkpointed already (its turn's end and a sweep) keeps its first.
  const created = await git([...bare(place), 'update-ref', ref, commit, NO_COMMIT], { allow: [1, 128] });
  if (created.code !== 0) return ok(null);
  // What this instance's worktree holds now: no other instance's checkpoint replaces it before its next turn.
  await noteCurrent(site, threadId, commit);
  // A clone's work lives in its remote: the branch and this checkpoint pushed, tried again for a few seconds when
  // the remote is not reached, and again at the thread's next use here when it still is not (worktree-making.ts).
  const common = await commonDirOf(site, place);
  if (isClone(site, common)) {
    // Refused (another instance's turn took the thread first): rebuilt on its checkpoint and pushed again, else set
    // aside (remote-push.ts); either way the worktree follows the remote's latest at its next use here.
    let pushed = await pushOrRebuild(site, common, threadId, ref);
    for (let wait = 250; pushed === 'unreachable' && wait <= 1_000; wait *= 2) {
      await sleep(wait);
      pushed = await pushOrRebuild(site, common, threadId, ref);
    }
    if (pushed === 'set-aside') return fail(setAside(threadId, ref));
    if (pushed === 'unreachable') {
      await noteUnpushed(site, threadId, ref);
      return fail({ code: 'repository_unavailable', detail: 'the checkpoint is kept on this instance: the remote was not reached; the thread\'s next use here pushes it' });
    }
    // Rebuilt on another instance's: what the remote holds now under this run.
    commit = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
  }
  return ok({ run_id: runId, message_id: plainId(input.messageId) === '' ? null : input.messageId, commit, created_at: createdAt, files_changed: filesChanged });
}
