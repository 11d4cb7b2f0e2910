import { randomUUID } from 'node:crypto';
import { copyFile, mkdir, readdir, readFile, realpath, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { isBranchName, worktreeBranch, type ChangedFile, type Changes, type ChangeStatus } from '../../domain/worktree.ts';
import type { MergeStrategy, Worktrees } from '../../ports/worktrees.ts';
import { GitOutputTooLargeError, GitUnavailableError, gitRunner, text } from './run-git.ts';
import { threadLocks } from './thread-lock.ts';

/** Thread ids become path segments and branch names: only a UUID is taken. */
const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The identity of the commits the console makes when the repository configures none. */
const IDENTITY = { GIT_AUTHOR_NAME: 'Agent console', GIT_AUTHOR_EMAIL: 'console@localhost', GIT_COMMITTER_NAME: 'Agent console', GIT_COMMITTER_EMAIL: 'console@localhost' };

/**
 * A merge under way, written before the base's ref moves and removed when all is done: a crash in
 * between (the ref moved, the base's checkout or the squashed branch not yet) is finished from it.
 */
interface MergeJournal {
  readonly at: string;
  readonly ref: string;
  readonly old: string;
  readonly commit: string;
  readonly head: string;
  readonly strategy: MergeStrategy;
  readonly checkout: string | null;
}

const STATUS: Readonly<Record<string, ChangeStatus>> = { A: 'added', M: 'modified', T: 'modified', D: 'deleted', R: 'renamed', C: 'added' };

/**
 * Threads' worktrees with the `git` executable (git 2.38 or newer: merges use `merge-tree
 * --write-tree`). Each lives at `<root>/<thread id>` on branch `console/<thread id>`; it is made at
 * a temporary path and moved into place, under a lock per thread (in this process, and a directory
 * under `<root>/.locks` between processes), so a crash or a second instance never leaves a half-made
 * one at its path: the next call repairs whatever it finds. Changes are read from a snapshot of the
 * worktree written through a temporary index (the worktree's own index is never touched); merges
 * are made with plumbing (`merge-tree`, `commit-tree`, a compare-and-swap `update-ref`), so the base
 * is never left half-merged: what follows the ref's move (the base's checkout, a squashed branch) is
 * written first in a journal under `<root>/.merges`, and a crash's is finished by the thread's next call.
 */
export function gitWorktrees(options: { readonly root: string; readonly timeoutMs?: number; readonly binary?: string }): Worktrees {
  const root = resolve(options.root);
  const git = gitRunner({ timeoutMs: options.timeoutMs ?? 30_000, ...(options.binary === undefined ? {} : { binary: options.binary }) });
  const locks = threadLocks(join(root, '.locks'));

  const journalOf = (threadId: string) => join(root, '.merges', `${threadId}.json`);

  /**
   * Finishes a merge a crash interrupted (call it holding the thread's lock): when the base took the
   * commit, its checkout is moved to it (or, files in the way, the base goes back: nothing merged, as
   * when it happens live) and a squashed branch is reset onto it; when not, nothing of it remains.
   */
  async function recover(threadId: string): Promise<void> {
    const file = journalOf(threadId);
    const raw = await readFile(file, 'utf8').catch(() => null);
    if (raw === null) return;
    const journal = JSON.parse(raw) as MergeJournal;
    const found = await git(['-C', journal.at, 'rev-parse', '--verify', '--quiet', `${journal.ref}^{commit}`], { allow: [1, 128] });
    const current = found.code === 0 ? text(found) : null;
    let merged = current === journal.commit;
    if (merged && journal.checkout !== null) {
      const head = await git(['-C', journal.checkout, 'symbolic-ref', '-q', 'HEAD'], { allow: [1, 128] });
      if (head.code === 0 && text(head) === journal.ref) {
        // Idempotent: an index already at the commit is kept, one still at the old base is moved.
        const moved = await git(['-C', journal.checkout, 'read-tree', '-u', '-m', journal.old, journal.commit], { allow: [128] });
        if (moved.code !== 0) {
          await git(['-C', journal.at, 'update-ref', journal.ref, journal.old, journal.commit], { allow: [1, 128] });
          merged = false;
        }
      }
    } else if (!merged && current !== null && current !== journal.old) {
      // The base moved on since: merged when it holds the commit.
      merged = (await git(['-C', journal.at, 'merge-base', '--is-ancestor', journal.commit, current], { allow: [1, 128] })).code === 0;
    }
    if (merged && journal.strategy === 'squash') {
      const head = await git(['-C', journal.at, 'rev-parse', 'HEAD'], { allow: [128] });
      if (head.code === 0 && text(head) === journal.head) await git(['-C', journal.at, 'reset', '--quiet', '--keep', journal.commit], { allow: [1, 128] });
    }
    await rm(file, { force: true });
  }

  /** Finishes the thread's interrupted merge, if one is journaled, before a read. */
  async function settled(worktree: Worktree): Promise<void> {
    const threadId = basename(worktree.path);
    if (await stat(journalOf(threadId)).then(() => true, () => false)) await locks.with(threadId, () => recover(threadId));
  }

  /** Runs `body`, answering git's absence or time-out as `git_unavailable`. */
  async function guarded<T>(body: () => Promise<Result<T, Failure>>): Promise<Result<T, Failure>> {
    try {
      return await body();
    } catch (error) {
      if (error instanceof GitUnavailableError) return fail({ code: 'git_unavailable', detail: error.message });
      throw error;
    }
  }

  /** Whether `path` is the top of a worktree with `branch` checked out. */
  async function valid(path: string, branch: string): Promise<boolean> {
    if (!(await stat(path).then((s) => s.isDirectory(), () => false))) return false;
    const top = await git(['-C', path, 'rev-parse', '--show-toplevel'], { allow: [128], env: { GIT_CEILING_DIRECTORIES: root } });
    if (top.code !== 0 || text(top) !== (await realpath(path))) return false;
    const head = await git(['-C', path, 'symbolic-ref', '-q', 'HEAD'], { allow: [1, 128] });
    return head.code === 0 && text(head) === `refs/heads/${branch}`;
  }

  /** The worktrees a repository knows: path and branch (`refs/heads/…`, or null when detached). */
  async function listed(repo: string): Promise<{ path: string; branch: string | null }[]> {
    const out = (await git(['-C', repo, 'worktree', 'list', '--porcelain', '-z'])).stdout.toString('utf8');
    const entries: { path: string; branch: string | null }[] = [];
    for (const line of out.split('\0')) {
      if (line.startsWith('worktree ')) entries.push({ path: line.slice('worktree '.length), branch: null });
      else if (line.startsWith('branch ') && entries.length > 0) entries[entries.length - 1]!.branch = line.slice('branch '.length);
    }
    return entries;
  }

  async function checkRepository(repo: string, base: string): Promise<Failure | null> {
    const dir = await git(['-C', repo, 'rev-parse', '--absolute-git-dir'], { allow: [128] });
    if (dir.code !== 0) return { code: 'repository_unavailable', detail: `${repo} is not a git repository` };
    const branch = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${base}^{commit}`], { allow: [1] });
    if (branch.code !== 0) return { code: 'repository_unavailable', detail: `${repo} has no branch ${base}` };
    return null;
  }

  async function make(repo: string, base: string, from: string | null, threadId: string, path: string, branch: string): Promise<void> {
    // What a crash or a failed attempt left: worktrees of this branch elsewhere (a temporary path) or broken at the path.
    await git(['-C', repo, 'worktree', 'prune']);
    for (const entry of await listed(repo)) {
      if (entry.branch === `refs/heads/${branch}` || resolve(entry.path) === path) {
        await git(['-C', repo, 'worktree', 'remove', '--force', '--force', '--', entry.path], { allow: [128] });
      }
    }
    await git(['-C', repo, 'worktree', 'prune']);
    // Anything else at the path is kept aside, never deleted: it may hold someone's work.
    if (await stat(path).then(() => true, () => false)) await rename(path, join(root, `.broken-${threadId}-${Date.now()}`));
    const temporary = join(root, `.tmp-${threadId}-${randomUUID()}`);
    const exists = (await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allow: [1] })).code === 0;
    const add = exists
      ? ['-C', repo, 'worktree', 'add', '--quiet', '--', temporary, branch]
      : ['-C', repo, 'worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', temporary, await startPoint(repo, base, from)];
    await git(add);
    await git(['-C', repo, 'worktree', 'move', '--', temporary, path]);
  }

  /** Marks a worktree used now (its directory's times): the clean-up removes those unused for long. */
  async function used(worktree: Worktree): Promise<Worktree> {
    const now = new Date();
    await utimes(worktree.path, now, now).catch(() => {});
    return worktree;
  }

  /** Commits what a worktree holds on its branch (when anything), as the console; answers whether it committed. */
  async function commitAll(at: string, message: string): Promise<boolean> {
    const configured = (await git(['-C', at, 'config', 'user.email'], { allow: [1] })).code === 0;
    await git(['-C', at, 'add', '--all', '--', '.']);
    const staged = (await git(['-C', at, 'diff', '--cached', '--quiet'], { allow: [1] })).code === 1;
    if (staged) await git(['-C', at, 'commit', '--quiet', '--no-verify', '-m', message], { env: configured ? {} : IDENTITY });
    return staged;
  }

  /** Where a new branch starts: branch `from` when it exists (a fork's parent's), else the base. */
  async function startPoint(repo: string, base: string, from: string | null): Promise<string> {
    if (from === null || !isBranchName(from)) return `refs/heads/${base}`;
    const found = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${from}^{commit}`], { allow: [1] });
    return found.code === 0 ? `refs/heads/${from}` : `refs/heads/${base}`;
  }

  /** The tree of what the worktree holds now (tracked, changed and untracked, ignored files left out), through a temporary index. */
  async function snapshot(path: string): Promise<string> {
    const index = join(tmpdir(), `console-index-${randomUUID()}`);
    try {
      const own = text(await git(['-C', path, 'rev-parse', '--path-format=absolute', '--git-path', 'index']));
      // A copy of the worktree's index keeps its stat cache (only changed files are hashed again); without one, HEAD's.
      const copied = await copyFile(own, index).then(() => true, () => false);
      if (!copied) await git(['-C', path, 'read-tree', 'HEAD'], { env: { GIT_INDEX_FILE: index } });
      await git(['-C', path, 'add', '--all', '--', '.'], { env: { GIT_INDEX_FILE: index } });
      return text(await git(['-C', path, 'write-tree'], { env: { GIT_INDEX_FILE: index } }));
    } finally {
      await rm(index, { force: true });
      await rm(`${index}.lock`, { force: true });
    }
  }

  /** The merge base of the worktree's branch with its base, and the snapshot tree. */
  async function endpoints(worktree: Worktree): Promise<{ mergeBase: string; tree: string }> {
    const mergeBase = text(await git(['-C', worktree.path, 'merge-base', `refs/heads/${worktree.base}`, 'HEAD']));
    return { mergeBase, tree: await snapshot(worktree.path) };
  }

  async function changedFiles(worktree: Worktree): Promise<{ files: ChangedFile[]; mergeBase: string; tree: string }> {
    const { mergeBase, tree } = await endpoints(worktree);
    const common = ['-C', worktree.path, 'diff-tree', '-r', '-z', '-M', '--no-commit-id'];
    const statuses = (await git([...common, '--name-status', mergeBase, tree], { maxBytes: 32 * 1024 * 1024 })).stdout.toString('utf8').split('\0');
    const numbers = (await git([...common, '--numstat', mergeBase, tree], { maxBytes: 32 * 1024 * 1024 })).stdout.toString('utf8').split('\0');
    const counts = new Map<string, { additions: number; deletions: number; binary: boolean }>();
    for (let i = 0; i < numbers.length; i += 1) {
      const [added, deleted, name] = numbers[i]!.split('\t');
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

  return {
    ensure: ({ repo, base, threadId, from = null }) => guarded(async () => {
      if (!THREAD_ID.test(threadId)) throw new Error(`not a thread id: ${threadId}`);
      const path = join(root, threadId);
      const branch = worktreeBranch(threadId);
      const worktree: Worktree = { branch, base, path };
      return locks.with(threadId, async () => {
        if (await valid(path, branch)) {
          await recover(threadId);
          return ok(await used(worktree));
        }
        const refused = await checkRepository(repo, base);
        if (refused !== null) return fail(refused);
        await mkdir(root, { recursive: true });
        await make(repo, base, from, threadId, path, branch);
        if (!(await valid(path, branch))) throw new Error(`the worktree at ${path} could not be made`);
        return ok(await used(worktree));
      });
    }),

    prune: (repo) => guarded(async () => {
      const pruned = await git(['-C', repo, 'worktree', 'prune'], { allow: [128] });
      return pruned.code === 0 ? ok(null) : fail({ code: 'repository_unavailable', detail: `${repo} is not a git repository` });
    }),

    async sweep(unusedMs) {
      const names = await readdir(root).catch(() => [] as string[]);
      const removed: string[] = [];
      for (const id of names.filter((name) => THREAD_ID.test(name))) {
        const path = join(root, id);
        const unused = async () => Date.now() - (await stat(path).then((s) => s.mtimeMs, () => Date.now())) > unusedMs;
        if (!(await unused())) continue;
        const gone = await locks.with(id, async () => {
          // Used while the lock was awaited: kept.
          if (!(await unused()) || !(await valid(path, worktreeBranch(id)))) return false;
          await recover(id);
          await commitAll(path, 'Work in progress, kept when the console removed this unused worktree');
          const common = text(await git(['-C', path, 'rev-parse', '--path-format=absolute', '--git-common-dir']));
          await git([`--git-dir=${common}`, 'worktree', 'remove', '--force', '--', path]);
          return true;
        });
        if (gone) removed.push(id);
      }
      return removed;
    },

    changes: (worktree) => guarded(async () => {
      await settled(worktree);
      const { files } = await changedFiles(worktree);
      const counted = text(await git(['-C', worktree.path, 'rev-list', '--left-right', '--count', `refs/heads/${worktree.base}...HEAD`]));
      const [behind, ahead] = counted.split(/\s+/).map(Number);
      const changes: Changes = { base: worktree.base, branch: worktree.branch, ahead: ahead ?? 0, behind: behind ?? 0, files };
      return ok(changes);
    }),

    diff: (worktree, file, maxBytes) => guarded(async () => {
      await settled(worktree);
      const { mergeBase, tree } = await endpoints(worktree);
      const paths = file === null ? [] : ['--', ...(file.old_path === undefined ? [] : [file.old_path]), file.path];
      try {
        const out = await git(['-C', worktree.path, 'diff-tree', '-p', '-M', '--no-commit-id', mergeBase, tree, ...paths], { maxBytes });
        return ok(out.stdout.toString('utf8'));
      } catch (error) {
        if (error instanceof GitOutputTooLargeError) return fail({ code: 'diff_too_large' });
        throw error;
      }
    }),

    async lines(worktree, file, from, to) {
      if (file.status === 'deleted' || file.binary) return null;
      await settled(worktree);
      const tree = await snapshot(worktree.path);
      // Read from the snapshot's tree, never through the file system: a symbolic link is its target's name, not its target.
      const blob = await git(['-C', worktree.path, 'cat-file', 'blob', `${tree}:${file.path}`], { allow: [128], maxBytes: 8 * 1024 * 1024 }).catch(() => null);
      if (blob === null || blob.code !== 0) return null;
      return blob.stdout.toString('utf8').split('\n').slice(Math.max(0, from - 1), to);
    },

    merge: (worktree, { message, strategy }) => guarded(async () => locks.with(basename(worktree.path), async () => {
      const at = worktree.path;
      const threadId = basename(at);
      await recover(threadId);
      const identity = (await git(['-C', at, 'config', 'user.email'], { allow: [1] })).code === 0 ? {} : IDENTITY;
      // What the worktree holds, committed on its branch first.
      await commitAll(at, message);
      const head = text(await git(['-C', at, 'rev-parse', 'HEAD']));
      const ref = `refs/heads/${worktree.base}`;
      const old = text(await git(['-C', at, 'rev-parse', '--verify', `${ref}^{commit}`]));
      const merged = await git(['-C', at, 'merge-tree', '--write-tree', '--name-only', '-z', old, head], { allow: [1] });
      const parts = merged.stdout.toString('utf8').split('\0');
      if (merged.code === 1) {
        const files: string[] = [];
        for (const part of parts.slice(1)) {
          if (part === '') break;
          if (!files.includes(part)) files.push(part);
        }
        return fail({ code: 'merge_conflict', files });
      }
      const tree = parts[0]!.trim();
      // Nothing to bring (merged already): the base stays as it is, with no empty commit.
      if (tree === text(await git(['-C', at, 'rev-parse', `${old}^{tree}`]))) return ok({ commit: old, base: worktree.base });
      const parents = strategy === 'merge' ? ['-p', old, '-p', head] : ['-p', old];
      const commit = text(await git(['-C', at, 'commit-tree', tree, ...parents, '-m', message], { env: identity }));
      // A checkout of the base moves with it, as a push with updateInstead does: only when it is clean.
      const checkout = (await listed(at)).find((entry) => entry.branch === ref) ?? null;
      if (checkout !== null) {
        const dirty = text(await git(['-C', checkout.path, 'status', '--porcelain', '--untracked-files=no']));
        if (dirty !== '') return fail({ code: 'base_checkout_dirty' });
      }
      const journal = journalOf(threadId);
      const entry: MergeJournal = { at, ref, old, commit, head, strategy, checkout: checkout?.path ?? null };
      await mkdir(join(root, '.merges'), { recursive: true });
      await writeFile(`${journal}.tmp`, JSON.stringify(entry));
      await rename(`${journal}.tmp`, journal);
      const swapped = await git(['-C', at, 'update-ref', '-m', `console: ${strategy} ${worktree.branch}`, ref, commit, old], { allow: [1, 128] });
      if (swapped.code !== 0) {
        await rm(journal, { force: true });
        return fail({ code: 'base_moved' });
      }
      if (checkout !== null) {
        const moved = await git(['-C', checkout.path, 'read-tree', '-u', '-m', old, commit], { allow: [128] });
        if (moved.code !== 0) {
          // Files in the way: the base goes back to where it was, and the checkout keeps what it had.
          await git(['-C', at, 'update-ref', ref, old, commit], { allow: [1, 128] });
          await rm(journal, { force: true });
          return fail({ code: 'base_checkout_dirty', detail: 'Files in the checkout of the base branch are in the way of the merge; nothing was merged' });
        }
      }
      // A squash leaves the branch beside the base: it moves to the squashed commit (the worktree holds
      // nothing uncommitted now), so the thread goes on from what was merged and shows no changes.
      if (strategy === 'squash') await git(['-C', at, 'reset', '--quiet', '--keep', commit], { allow: [1, 128] });
      await rm(journal, { force: true });
      return ok({ commit, base: worktree.base });
    })),
  };
}
