import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { worktreeBranch } from '../../domain/worktree.ts';
import { text } from './run-git.ts';
import { recover } from './merge-journal.ts';
import { commitAll, WorktreeUnreadableError } from './worktree-commits.ts';
import { placeOf, plainIndex, THREAD_ID, type WorktreeSite } from './worktree-site.ts';

/**
 * Removes the worktrees not used for longer than `unusedMs` (`Worktrees.sweep`), each under its
 * thread's lock after committing what it holds on its branch; answers the thread ids whose worktree went.
 */
export async function sweepWorktrees(site: WorktreeSite, unusedMs: number): Promise<string[]> {
  const { root, git, bare, places, locks } = site;
  const names = await readdir(root).catch(() => [] as string[]);
  const removed: string[] = [];
  for (const id of names.filter((name) => THREAD_ID.test(name))) {
    const path = join(root, id);
    const unused = async () => Date.now() - (await stat(path).then((s) => s.mtimeMs, () => Date.now())) > unusedMs;
    if (!(await unused())) continue;
    const gone = await locks.with(id, async () => {
      // Used while the lock was awaited: kept.
      if (!(await unused())) return false;
      const place = await placeOf(site, { branch: worktreeBranch(id), base: '', path });
      // `worktree remove` reads the worktree's `.git`: one an agent replaced is put back first.
      if (place === null || !(await places.repair(place))) return false;
      await plainIndex(site, place, worktreeBranch(id));
      await recover(site, id, place);
      // Files git refuses (an agent's): the worktree is kept rather than lose them.
      const committed = await commitAll(site, place, worktreeBranch(id), 'Work in progress, kept when the console removed this unused worktree').then(() => true, (error: unknown) => {
        if (error instanceof WorktreeUnreadableError) return false;
        throw error;
      });
      if (!committed) return false;
      const common = text(await git([...bare(place), 'rev-parse', '--path-format=absolute', '--git-common-dir']));
      await git([`--git-dir=${common}`, '-C', site.empty, 'worktree', 'remove', '--force', '--', path]);
      await places.forget(id);
      return true;
    });
    if (gone) removed.push(id);
  }
  return removed;
}
