import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { ChangedFile, Changes, ChangeStatus } from '../../domain/worktree.ts';
import { copyPlain, type GitPlace } from './git-place.ts';
import { settled } from './merge-journal.ts';
import { GitOutputTooLargeError, text } from './run-git.ts';
import { addAll, WorktreeUnreadableError } from './worktree-commits.ts';
import { NO_DRIVERS, onPlace, placeOf, type WorktreeSite } from './worktree-site.ts';

const STATUS: Readonly<Record<string, ChangeStatus>> = { A: 'added', M: 'modified', T: 'modified', D: 'deleted', R: 'renamed', C: 'added' };

/**
 * The tree of what the worktree holds now (tracked, changed and untracked, ignored files left out), through a
 * temporary index: the worktree's own index, HEAD and files are never touched.
 */
export async function snapshot(site: WorktreeSite, place: GitPlace, branch: string): Promise<string> {
  const { git, bare } = site;
  const index = join(tmpdir(), `console-index-${randomUUID()}`);
  try {
    // A copy of the worktree's index keeps its stat cache (only changed files are hashed again); without one,
    // the branch's. Never through a link nor from a FIFO: the admin directory is a sandboxed agent's to write.
    const copied = await copyPlain(join(place.gitDir, 'index'), index);
    if (!copied) await git([...bare(place), 'read-tree', `refs/heads/${branch}`], { env: { GIT_INDEX_FILE: index } });
    await addAll(site, place, { GIT_INDEX_FILE: index });
    return text(await git([...bare(place), 'write-tree'], { env: { GIT_INDEX_FILE: index } }));
  } finally {
    await rm(index, { force: true });
    await rm(`${index}.lock`, { force: true });
  }
}

/** The merge base of the worktree's branch with its base, and the snapshot tree. */
async function endpoints(site: WorktreeSite, worktree: Worktree, place: GitPlace): Promise<{ mergeBase: string; tree: string }> {
  const mergeBase = text(await site.git([...site.bare(place), 'merge-base', `refs/heads/${worktree.base}`, `refs/heads/${worktree.branch}`]));
  return { mergeBase, tree: await snapshot(site, place, worktree.branch) };
}

async function changedFiles(site: WorktreeSite, worktree: Worktree, place: GitPlace): Promise<{ files: ChangedFile[]; mergeBase: string; tree: string }> {
  const { git, bare, maxListBytes } = site;
  const { mergeBase, tree } = await endpoints(site, worktree, place);
  const common = [...bare(place), 'diff-tree', ...NO_DRIVERS, '-r', '-z', '-M', '--no-commit-id'];
  const statuses = (await git([...common, '--name-status', mergeBase, tree], { maxBytes: maxListBytes })).stdout.toString('utf8').split('\0');
  const numbers = (await git([...common, '--numstat', mergeBase, tree], { maxBytes: maxListBytes })).stdout.toString('utf8').split('\0');
  const counts = new Map<string, { additions: number; deletions: number; binary: boolean }>();
  for (let i = 0; i < numbers.length; i += 1) {
    // A path may hold tabs itself: it is all that follows the second.
    const [added, deleted, ...rest] = numbers[i]!.split('\t');
    const name = rest.length === 0 ? undefined : rest.join('\t');
    if (added === undefined || deleted === undefined || name === undefined) continue;
    // A rename's numstat names no path on its line: the old and new paths follow.
    let path = name;
    if (name === '') {
      path = numbers[i + 2] ?? '';
      i += 2;
    }
    const binary = added === '-';
    counts.set(path, { additions: binary ? 0 : Number(added), deletions: binary ? 0 : Number(deleted), binary });
  }
  const files: ChangedFile[] = [];
  for (let i = 0; i < statuses.length; i += 1) {
    const code = statuses[i]!;
    if (code === '') continue;
    const status = STATUS[code[0]!] ?? 'modified';
    if (code[0] === 'R' || code[0] === 'C') {
      const oldPath = statuses[i + 1]!;
      const path = statuses[i + 2]!;
      i += 2;
      const c = counts.get(path) ?? { additions: 0, deletions: 0, binary: false };
      files.push(code[0] === 'R' ? { path, status, old_path: oldPath, ...c } : { path, status, ...c });
    } else {
      const path = statuses[i + 1]!;
      i += 1;
      files.push({ path, status, ...(counts.get(path) ?? { additions: 0, deletions: 0, binary: false }) });
    }
  }
  return { files, mergeBase, tree };
}

/** What the worktree holds against the merge base with its base branch, and how far apart the two are (`Worktrees.changes`). */
export function worktreeChanges(site: WorktreeSite, worktree: Worktree): Promise<Result<Changes, Failure>> {
  return onPlace(site, worktree, async (place) => {
    await settled(site, worktree, place);
    const { files, tree } = await changedFiles(site, worktree, place);
    const counted = text(await site.git([...site.bare(place), 'rev-list', '--left-right', '--count', `refs/heads/${worktree.base}...refs/heads/${worktree.branch}`]));
    const [behind, ahead] = counted.split(/\s+/).map(Number);
    // What no commit holds yet: the files the worktree differs in from its branch's last commit (an agent
    // that edits and never commits leaves all its work here, and `ahead` counts it as nothing).
    const pending = (await site.git([...site.bare(place), 'diff-tree', ...NO_DRIVERS, '-r', '-z', '-M', '--name-only', '--no-commit-id', `refs/heads/${worktree.branch}`, tree], { maxBytes: site.maxListBytes }))
      .stdout.toString('utf8').split('\0').filter((path) => path !== '');
    const changes: Changes = { base: worktree.base, branch: worktree.branch, ahead: ahead ?? 0, behind: behind ?? 0, uncommitted: pending.length, files };
    return ok(changes);
  });
}

/** The unified diff of one changed file, or of all (null), of at most `maxBytes` (`Worktrees.diff`). */
export function worktreeDiff(site: WorktreeSite, worktree: Worktree, file: ChangedFile | null, maxBytes: number): Promise<Result<string, Failure>> {
  return onPlace(site, worktree, async (place) => {
    await settled(site, worktree, place);
    const { mergeBase, tree } = await endpoints(site, worktree, place);
    const paths = file === null ? [] : ['--', ...(file.old_path === undefined ? [] : [file.old_path]), file.path];
    try {
      const out = await site.git([...site.bare(place), 'diff-tree', ...NO_DRIVERS, '-p', '-M', '--no-commit-id', mergeBase, tree, ...paths], { maxBytes });
      return ok(out.stdout.toString('utf8'));
    } catch (error) {
      if (error instanceof GitOutputTooLargeError) return fail({ code: 'diff_too_large' });
      throw error;
    }
  });
}

/** Lines `from` to `to` of a changed file as the worktree holds it; null when it has none (`Worktrees.lines`). */
export async function worktreeLines(site: WorktreeSite, worktree: Worktree, file: ChangedFile, from: number, to: number): Promise<string[] | null> {
  if (file.status === 'deleted' || file.binary) return null;
  const place = await placeOf(site, worktree);
  if (place === null) return null;
  await settled(site, worktree, place);
  const tree = await snapshot(site, place, worktree.branch).catch((error: unknown) => {
    if (error instanceof WorktreeUnreadableError) return null;
    throw error;
  });
  if (tree === null) return null;
  // Read from the snapshot's tree, never through the file system: a symbolic link is its target's name, not its target.
  const blob = await site.git([...site.bare(place), 'cat-file', 'blob', `${tree}:${file.path}`], { allow: [128], maxBytes: 8 * 1024 * 1024 }).catch(() => null);
  if (blob === null || blob.code !== 0) return null;
  return blob.stdout.toString('utf8').split('\n').slice(Math.max(0, from - 1), to);
}
