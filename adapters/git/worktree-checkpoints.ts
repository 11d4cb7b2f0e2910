import { basename, join, resolve } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { ok, type Result } from '../../domain/result.ts';
import { checkpointRefs, worktreeBranch, type Checkpoint } from '../../domain/worktree.ts';
import type { GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import { snapshot } from './worktree-changes.ts';
import { IDENTITY } from './worktree-commits.ts';
import { NO_DRIVERS, onPlace, THREAD_ID, type WorktreeSite } from './worktree-site.ts';

/** The create-only old value of `update-ref`: a checkpoint's ref is written once, never moved. */
const NO_COMMIT = '0'.repeat(40);

/** What a checkpoint commit's message records, as trailers, beside its title. */
const TRAILER = { seq: 'Console-Checkpoint', run: 'Console-Run', message: 'Console-Message', created: 'Console-Created', files: 'Console-Files-Changed' } as const;

/** Only ids go into a message: nothing that could end a trailer line. */
const plainId = (id: string | null): string => (id !== null && /^[A-Za-z0-9_-]{1,200}$/.test(id) ? id : '');

function trailer(message: string, name: string): string | null {
  const found = new RegExp(`^${name}: (.*)$`, 'm').exec(message);
  return found === null ? null : found[1]!;
}

/** A checkpoint and its order among the thread's, read from its commit's message. */
interface Listed extends Checkpoint {
  readonly seq: number;
}

/** The thread's checkpoints, oldest first: one `for-each-ref` over its refs. */
async function listed(site: WorktreeSite, place: GitPlace, threadId: string): Promise<Listed[]> {
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
    found.push({
      seq,
      run_id: run === '' ? null : run,
      message_id: messageId === '' ? null : messageId,
      commit,
      created_at: trailer(message, TRAILER.created) ?? '',
      files_changed: Number(trailer(message, TRAILER.files) ?? 0),
    });
  }
  return found.sort((a, b) => a.seq - b.seq);
}

const withoutSeq = ({ seq: _seq, ...checkpoint }: Listed): Checkpoint => checkpoint;

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
    const { git, bare } = site;
    const before = await listed(site, place, threadId);
    if (runId === null && before.length > 0) return ok(null);
    const previous = before.at(-1);
    const parent = previous?.commit ?? text(await git([...bare(place), 'rev-parse', '--verify', `refs/heads/${branch}^{commit}`]));
    const tree = await snapshot(site, place, branch);
    const changed = await git([...bare(place), 'diff-tree', ...NO_DRIVERS, '-r', '-z', '--no-renames', '--name-only', parent, tree], { maxBytes: site.maxListBytes });
    const filesChanged = changed.stdout.toString('utf8').split('\0').filter((name) => name !== '').length;
    const createdAt = new Date().toISOString();
    const seq = (previous?.seq ?? 0) + 1;
    const message = [
      runId === null ? 'Checkpoint before the first turn' : `Checkpoint after run ${runId}`, '',
      `${TRAILER.seq}: ${seq}`, `${TRAILER.run}: ${plainId(runId)}`, `${TRAILER.message}: ${plainId(input.messageId)}`,
      `${TRAILER.created}: ${createdAt}`, `${TRAILER.files}: ${filesChanged}`, '',
    ].join('\n');
    const configured = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0;
    const commit = text(await git([...bare(place), 'commit-tree', tree, '-p', parent, '-m', message], { env: configured ? {} : IDENTITY }));
    const ref = `${checkpointRefs(threadId)}${runId ?? 'base'}`;
    // Created once: a run checkpointed already (its turn's end and a sweep) keeps its first.
    const created = await git([...bare(place), 'update-ref', ref, commit, NO_COMMIT], { allow: [1, 128] });
    if (created.code !== 0) return ok(null);
    return ok({ run_id: runId, message_id: plainId(input.messageId) === '' ? null : input.messageId, commit, created_at: createdAt, files_changed: filesChanged });
    // An agent that switched branches or detached HEAD still gets its turn's checkpoint: nothing here reads HEAD.
  }, true));
}

/** The thread's checkpoints, oldest first (`Worktrees.checkpoints`). */
export function listCheckpoints(site: WorktreeSite, worktree: Worktree): Promise<Result<Checkpoint[], Failure>> {
  return onPlace(site, worktree, async (place) => ok((await listed(site, place, basename(worktree.path))).map(withoutSeq)), true);
}
