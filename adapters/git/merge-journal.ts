import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Worktree } from '../../domain/model.ts';
import { worktreeBranch } from '../../domain/worktree.ts';
import type { MergeStrategy } from '../../ports/worktrees.ts';
import { inTree, type GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import { moveBranch } from './worktree-commits.ts';
import { checkoutOf, type WorktreeSite } from './worktree-site.ts';

/**
 * A merge under way, written before the base's ref moves and removed when all is done: a crash in
 * between (the ref moved, the base's checkout or the squashed branch not yet) is finished from it.
 */
export interface MergeJournal {
  readonly at: string;
  readonly ref: string;
  readonly old: string;
  readonly commit: string;
  readonly head: string;
  readonly strategy: MergeStrategy;
  readonly checkout: string | null;
  /** The checkout's git dir (journals written before it was kept name none: it is found again). */
  readonly checkoutGitDir?: string;
}

/** Where the journal of the thread's merge under way is kept (`<root>/.merges/<thread id>.json`). */
export const journalOf = (site: WorktreeSite, threadId: string) => join(site.root, '.merges', `${threadId}.json`);

/** Writes the journal of the thread's merge, whole or not at all (a temporary file renamed into place). */
export async function writeJournal(site: WorktreeSite, threadId: string, entry: MergeJournal): Promise<void> {
  const journal = journalOf(site, threadId);
  await mkdir(join(site.root, '.merges'), { recursive: true });
  await writeFile(`${journal}.tmp`, JSON.stringify(entry));
  await rename(`${journal}.tmp`, journal);
}

/**
 * Finishes a merge a crash interrupted (call it holding the thread's lock): when the base took the
 * commit, its checkout is moved to it (or, files in the way, the base goes back: nothing merged, as
 * when it happens live) and a squashed branch is reset onto it; when not, nothing of it remains.
 */
export async function recover(site: WorktreeSite, threadId: string, place: GitPlace): Promise<void> {
  const { git, bare, places } = site;
  const file = journalOf(site, threadId);
  const raw = await readFile(file, 'utf8').catch(() => null);
  if (raw === null) return;
  const journal = JSON.parse(raw) as MergeJournal;
  const found = await git([...bare(place), 'rev-parse', '--verify', '--quiet', `${journal.ref}^{commit}`], { allow: [1, 128] });
  const current = found.code === 0 ? text(found) : null;
  let merged = current === journal.commit;
  const checkout = journal.checkout === null ? null
    : journal.checkoutGitDir === undefined ? await checkoutOf(site, place, journal.ref) : await places.at(journal.checkoutGitDir, journal.checkout);
  if (merged && checkout !== null) {
    const head = await git([...bare(checkout), 'symbolic-ref', '-q', 'HEAD'], { allow: [1, 128] });
    if (head.code === 0 && text(head) === journal.ref) {
      // Idempotent: an index already at the commit is kept, one still at the old base is moved.
      const moved = await git([...inTree(checkout), 'read-tree', '-u', '-m', journal.old, journal.commit], { allow: [128] });
      if (moved.code !== 0) {
        await git([...bare(place), 'update-ref', journal.ref, journal.old, journal.commit], { allow: [1, 128] });
        merged = false;
      }
    }
  } else if (!merged && current !== null && current !== journal.old) {
    // The base moved on since: merged when it holds the commit.
    merged = (await git([...bare(place), 'merge-base', '--is-ancestor', journal.commit, current], { allow: [1, 128] })).code === 0;
  }
  if (merged && journal.strategy === 'squash') await moveBranch(site, place, worktreeBranch(threadId), journal.head, journal.commit);
  await rm(file, { force: true });
}

/** Finishes the thread's interrupted merge, if one is journaled, before a read. */
export async function settled(site: WorktreeSite, worktree: Worktree, place: GitPlace): Promise<void> {
  const threadId = basename(worktree.path);
  if (await stat(journalOf(site, threadId)).then(() => true, () => false)) await site.locks.with(threadId, () => recover(site, threadId, place));
}

/**
 * Whether another merge into `ref` through `checkout` is under way (its journal written, not yet removed):
 * the checkout is then only moving, its index behind its ref for a moment, not dirty.
 */
export async function moving(site: WorktreeSite, threadId: string, ref: string, checkout: GitPlace): Promise<boolean> {
  const names = await readdir(join(site.root, '.merges')).catch(() => [] as string[]);
  for (const name of names.filter((candidate) => candidate.endsWith('.json') && candidate !== `${threadId}.json`)) {
    const raw = await readFile(join(site.root, '.merges', name), 'utf8').catch(() => null);
    const journal = raw === null ? null : (JSON.parse(raw) as MergeJournal);
    if (journal !== null && journal.ref === ref && journal.checkout === checkout.workTree) return true;
  }
  return false;
}
