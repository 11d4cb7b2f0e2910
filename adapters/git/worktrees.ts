import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { isBranchName, worktreeBranch, type ChangedFile, type Changes, type ChangeStatus } from '../../domain/worktree.ts';
import type { MergeStrategy, Worktrees } from '../../ports/worktrees.ts';
import { copyPlain, driverOverrides, gitPlaces, inTree, WORKTREE_CONFIG, type GitPlace } from './git-place.ts';
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
  /** The checkout's git dir (journals written before it was kept name none: it is found again). */
  readonly checkoutGitDir?: string;
}

/** git refused to stage what the worktree holds (a path or an attribute an agent wrote); its message is for the log only. */
class WorktreeUnreadableError extends Error {
  constructor(readonly stderr: string) {
    super(`git could not stage the worktree's files: ${stderr.trim().slice(0, 300)}`);
    this.name = 'WorktreeUnreadableError';
  }
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
 *
 * An agent writes any file of its worktree, `.git` included: git is never let find a worktree's repository
 * or configuration there. Every command on a worktree names the git dir the service found for it in the
 * repository (git-place.ts) and its work tree; commands that need no files of it run with an empty work
 * tree of the service's, so no attribute an agent wrote names a merge driver; filters the repository
 * defines are emptied, diffs never run a textconv or an external diff; a `.git` found replaced is put back.
 */
export function gitWorktrees(options: {
  readonly root: string;
  readonly timeoutMs?: number;
  readonly binary?: string;
  /** Bytes of a changes listing (each of its two git outputs) past which it is refused `changes_too_large` (32 MiB). */
  readonly maxListBytes?: number;
}): Worktrees {
  const root = resolve(options.root);
  const git = gitRunner({ timeoutMs: options.timeoutMs ?? 30_000, ...(options.binary === undefined ? {} : { binary: options.binary }) });
  const locks = threadLocks(join(root, '.locks'));
  const places = gitPlaces(git, root);
  /** A work tree of the service's own, always empty: where commands that need no worktree's files run. */
  const empty = join(root, '.empty');
  /** The arguments that run git on a place's repository with no file (nor attribute) of its worktree. */
  const bare = (place: GitPlace): string[] => [...place.config, `--git-dir=${place.gitDir}`, `--work-tree=${empty}`, '-C', empty];
  /**
   * Diffs show what changed, never what a driver makes of it; and a submodule is a commit id, its
   * `.gitmodules` entry never read (git dies on one an agent wrote with `update = !command`).
   */
  const NO_DRIVERS = ['--no-ext-diff', '--no-textconv', '--ignore-submodules=none'];

  const maxListBytes = options.maxListBytes ?? 32 * 1024 * 1024;

  const journalOf = (threadId: string) => join(root, '.merges', `${threadId}.json`);

  /** The place of a worktree the thread's last check found (ensure runs before every read and merge); null when git no longer holds it there. */
  async function placeOf(worktree: Worktree): Promise<GitPlace | null> {
    await mkdir(empty, { recursive: true });
    return places.recorded(basename(worktree.path), worktree.path, worktree.branch);
  }

  /** Runs `body` on the worktree's place, or answers `worktree_tampered` when it has none. */
  async function onPlace<T>(worktree: Worktree, body: (place: GitPlace) => Promise<Result<T, Failure>>): Promise<Result<T, Failure>> {
    const place = await placeOf(worktree);
    if (place === null) return fail({ code: 'worktree_tampered', detail: `git holds no worktree at ${worktree.path} on ${worktree.branch}: its next turn or read makes it again` });
    await plainIndex(place, worktree.branch);
    return body(place);
  }

  /**
   * Makes the worktree's index a file again when a sandboxed agent (whose admin directory it is) left
   * something else there (a FIFO every git command would block on until its time-out, a link): rebuilt
   * from the branch, as a new worktree's is; the files themselves are untouched.
   */
  async function plainIndex(place: GitPlace, branch: string): Promise<void> {
    const index = join(place.gitDir, 'index');
    const found = await lstat(index).catch(() => null);
    if (found === null || found.isFile()) return;
    await rm(index, { recursive: true, force: true });
    await git([...bare(place), 'read-tree', `refs/heads/${branch}`]);
  }

  /** The worktrees git lists through `prefix` (a repository, or a place): path, branch (`refs/heads/…`, or null when detached), whether the main one. */
  async function listed(prefix: readonly string[]): Promise<{ path: string; branch: string | null; main: boolean }[]> {
    const out = (await git([...prefix, 'worktree', 'list', '--porcelain', '-z'])).stdout.toString('utf8');
    const entries: { path: string; branch: string | null; main: boolean }[] = [];
    for (const line of out.split('\0')) {
      if (line.startsWith('worktree ')) entries.push({ path: line.slice('worktree '.length), branch: null, main: entries.length === 0 });
      else if (line.startsWith('branch ') && entries.length > 0) entries[entries.length - 1]!.branch = line.slice('branch '.length);
    }
    return entries;
  }

  /** The place of the checkout of `ref` in the repository of `place` (its main worktree, or a linked one), or null when none has it checked out. */
  async function checkoutOf(place: GitPlace, ref: string): Promise<GitPlace | null> {
    const entry = (await listed(bare(place))).find((candidate) => candidate.branch === ref) ?? null;
    if (entry === null) return null;
    const common = text(await git([...bare(place), 'rev-parse', '--path-format=absolute', '--git-common-dir']));
    return places.checkout(common, entry.path, entry.main);
  }

  /**
   * Finishes a merge a crash interrupted (call it holding the thread's lock): when the base took the
   * commit, its checkout is moved to it (or, files in the way, the base goes back: nothing merged, as
   * when it happens live) and a squashed branch is reset onto it; when not, nothing of it remains.
   */
  async function recover(threadId: string, place: GitPlace): Promise<void> {
    const file = journalOf(threadId);
    const raw = await readFile(file, 'utf8').catch(() => null);
    if (raw === null) return;
    const journal = JSON.parse(raw) as MergeJournal;
    const found = await git([...bare(place), 'rev-parse', '--verify', '--quiet', `${journal.ref}^{commit}`], { allow: [1, 128] });
    const current = found.code === 0 ? text(found) : null;
    let merged = current === journal.commit;
    const checkout = journal.checkout === null ? null
      : journal.checkoutGitDir === undefined ? await checkoutOf(place, journal.ref) : await places.at(journal.checkoutGitDir, journal.checkout);
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
    if (merged && journal.strategy === 'squash') await moveBranch(place, worktreeBranch(threadId), journal.head, journal.commit);
    await rm(file, { force: true });
  }

  /** Finishes the thread's interrupted merge, if one is journaled, before a read. */
  async function settled(worktree: Worktree, place: GitPlace): Promise<void> {
    const threadId = basename(worktree.path);
    if (await stat(journalOf(threadId)).then(() => true, () => false)) await locks.with(threadId, () => recover(threadId, place));
  }

  /**
   * Whether another merge into `ref` through `checkout` is under way (its journal written, not yet removed):
   * the checkout is then only moving, its index behind its ref for a moment, not dirty.
   */
  async function moving(threadId: string, ref: string, checkout: GitPlace): Promise<boolean> {
    const names = await readdir(join(root, '.merges')).catch(() => [] as string[]);
    for (const name of names.filter((candidate) => candidate.endsWith('.json') && candidate !== `${threadId}.json`)) {
      const raw = await readFile(join(root, '.merges', name), 'utf8').catch(() => null);
      const journal = raw === null ? null : (JSON.parse(raw) as MergeJournal);
      if (journal !== null && journal.ref === ref && journal.checkout === checkout.workTree) return true;
    }
    return false;
  }

  /** Runs `body`, answering git's absence or time-out as `git_unavailable`. */
  async function guarded<T>(body: () => Promise<Result<T, Failure>>): Promise<Result<T, Failure>> {
    try {
      return await body();
    } catch (error) {
      if (error instanceof GitUnavailableError) return fail({ code: 'git_unavailable', detail: error.message });
      if (error instanceof WorktreeUnreadableError) return fail({ code: 'worktree_unreadable' });
      // Only a listing is bounded here: a diff's own bound is answered where it is asked (`diff_too_large`).
      if (error instanceof GitOutputTooLargeError) return fail({ code: 'changes_too_large' });
      throw error;
    }
  }

  /** The place of the worktree at `path` when it is one (a directory git holds there, with `branch` and a `.git`); else null. */
  async function found(repo: string, threadId: string, path: string, branch: string): Promise<GitPlace | null> {
    if (!(await lstat(path).then((s) => s.isDirectory(), () => false))) return null;
    // No `.git` at all: a directory that is no worktree (a crash between its making and its checkout, junk), made again.
    if (!(await lstat(join(path, '.git')).then(() => true, () => false))) return null;
    await mkdir(empty, { recursive: true });
    return places.find(repo, threadId, path, branch);
  }

  async function checkRepository(repo: string, base: string): Promise<Failure | null> {
    const dir = await git(['-C', repo, 'rev-parse', '--absolute-git-dir'], { allow: [128] });
    if (dir.code !== 0) return { code: 'repository_unavailable', detail: `${repo} is not a git repository` };
    const branch = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${base}^{commit}`], { allow: [1] });
    if (branch.code !== 0) return { code: 'repository_unavailable', detail: `${repo} has no branch ${base}` };
    return null;
  }

  // The repository itself (`repo`) is the operator's: git finds it there. What it checks out is a branch an agent wrote.
  async function make(repo: string, base: string, from: string | null, threadId: string, path: string, branch: string): Promise<void> {
    // What a crash or a failed attempt left: worktrees of this branch elsewhere (a temporary path) or broken at the path.
    await git(['-C', repo, 'worktree', 'prune']);
    for (const entry of await listed(['-C', repo])) {
      if (entry.branch === `refs/heads/${branch}` || resolve(entry.path) === path) {
        await git(['-C', repo, 'worktree', 'remove', '--force', '--force', '--', entry.path], { allow: [128] });
      }
    }
    // Anything else at the path is kept aside, never deleted: it may hold someone's work.
    if (await lstat(path).then(() => true, () => false)) await rename(path, join(root, `.broken-${threadId}-${Date.now()}`));
    // A worktree `remove` refused (its `.git` replaced) is forgotten now that nothing is at its path.
    await git(['-C', repo, 'worktree', 'prune']);
    const temporary = join(root, `.tmp-${threadId}-${randomUUID()}`);
    const exists = (await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { allow: [1] })).code === 0;
    const config = [...WORKTREE_CONFIG, ...(await driverOverrides(git, ['-C', repo]))];
    const add = exists
      ? [...config, '-C', repo, 'worktree', 'add', '--quiet', '--', temporary, branch]
      : [...config, '-C', repo, 'worktree', 'add', '--quiet', '--no-track', '-b', branch, '--', temporary, await startPoint(repo, base, from)];
    await git(add);
    await git(['-C', repo, 'worktree', 'move', '--', temporary, path]);
  }

  /** Marks a worktree used now (its directory's times): the clean-up removes those unused for long. */
  async function used(worktree: Worktree): Promise<Worktree> {
    const now = new Date();
    await utimes(worktree.path, now, now).catch(() => {});
    return worktree;
  }

  /**
   * Stages everything the worktree holds (in `env`'s index, else its own). git refuses some of what an agent
   * can write (a path such as `.GIT/config`, an attribute naming an encoding that fails): that is
   * {@link WorktreeUnreadableError}, not a bug.
   */
  async function addAll(place: GitPlace, env: Readonly<Record<string, string>> = {}): Promise<void> {
    const added = await git([...inTree(place), 'add', '--all', '--', '.'], { env, allow: [128] });
    if (added.code !== 0) throw new WorktreeUnreadableError(added.stderr);
  }

  /**
   * Commits what a worktree holds on its branch (when anything), as the console; answers whether it committed.
   * Plumbing, onto the branch by name: `git commit` would follow the worktree's HEAD and write COMMIT_EDITMSG
   * in its admin directory, both of which a sandboxed agent can write (a HEAD naming another branch, a
   * COMMIT_EDITMSG made a symbolic link to a file of the service's, which `commit` would overwrite).
   */
  async function commitAll(place: GitPlace, branch: string, message: string): Promise<boolean> {
    const configured = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0;
    const ref = `refs/heads/${branch}`;
    await addAll(place);
    const parent = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
    const staged = (await git([...bare(place), 'diff-index', ...NO_DRIVERS, '--cached', '--quiet', parent, '--'], { allow: [1] })).code === 1;
    if (!staged) return false;
    const tree = text(await git([...bare(place), 'write-tree']));
    const commit = text(await git([...bare(place), 'commit-tree', tree, '-p', parent, '-m', message], { env: configured ? {} : IDENTITY }));
    await git([...bare(place), 'update-ref', ref, commit, parent]);
    return true;
  }

  /** Where a new branch starts: branch `from` when it exists (a fork's parent's), else the base. */
  async function startPoint(repo: string, base: string, from: string | null): Promise<string> {
    if (from === null || !isBranchName(from)) return `refs/heads/${base}`;
    const found = await git(['-C', repo, 'rev-parse', '--verify', '--quiet', `refs/heads/${from}^{commit}`], { allow: [1] });
    return found.code === 0 ? `refs/heads/${from}` : `refs/heads/${base}`;
  }

  /**
   * Moves a thread's branch from `from` to `to` with its worktree's index and files (keeping what differs
   * locally, as `reset --keep` would), when the branch is still at `from`. The branch by name, never through
   * the worktree's HEAD: its admin directory is a sandboxed agent's to write.
   */
  async function moveBranch(place: GitPlace, branch: string, from: string, to: string): Promise<void> {
    const ref = `refs/heads/${branch}`;
    const at = await git([...bare(place), 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { allow: [1, 128] });
    if (at.code !== 0 || text(at) !== from) return;
    // `-m -u` (the base checkout's is `-u -m`): a fault test stops at this one step by its arguments.
    const moved = await git([...inTree(place), 'read-tree', '-m', '-u', from, to], { allow: [128] });
    if (moved.code === 0) await git([...bare(place), 'update-ref', ref, to, from], { allow: [1, 128] });
  }

  /** The tree of what the worktree holds now (tracked, changed and untracked, ignored files left out), through a temporary index. */
  async function snapshot(place: GitPlace, branch: string): Promise<string> {
    const index = join(tmpdir(), `console-index-${randomUUID()}`);
    try {
      // A copy of the worktree's index keeps its stat cache (only changed files are hashed again); without one,
      // the branch's. Never through a link nor from a FIFO: the admin directory is a sandboxed agent's to write.
      const copied = await copyPlain(join(place.gitDir, 'index'), index);
      if (!copied) await git([...bare(place), 'read-tree', `refs/heads/${branch}`], { env: { GIT_INDEX_FILE: index } });
      await addAll(place, { GIT_INDEX_FILE: index });
      return text(await git([...bare(place), 'write-tree'], { env: { GIT_INDEX_FILE: index } }));
    } finally {
      await rm(index, { force: true });
      await rm(`${index}.lock`, { force: true });
    }
  }

  /** The merge base of the worktree's branch with its base, and the snapshot tree. */
  async function endpoints(worktree: Worktree, place: GitPlace): Promise<{ mergeBase: string; tree: string }> {
    const mergeBase = text(await git([...bare(place), 'merge-base', `refs/heads/${worktree.base}`, `refs/heads/${worktree.branch}`]));
    return { mergeBase, tree: await snapshot(place, worktree.branch) };
  }

  async function changedFiles(worktree: Worktree, place: GitPlace): Promise<{ files: ChangedFile[]; mergeBase: string; tree: string }> {
    const { mergeBase, tree } = await endpoints(worktree, place);
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

  /**
   * Why the base's checkout did not take a merge: `base_moved` when the base is only moving (its ref is no
   * longer `old`, or another merge into it is under way: the checkout's index lags its ref for a moment),
   * else `base_checkout_dirty` (uncommitted changes, or files in the way).
   */
  async function movedOrDirty(threadId: string, ref: string, old: string, place: GitPlace, checkout: GitPlace): Promise<'base_moved' | 'base_checkout_dirty'> {
    const now = await git([...bare(place), 'rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { allow: [1] });
    if (now.code !== 0 || text(now) !== old || (await moving(threadId, ref, checkout))) return 'base_moved';
    return 'base_checkout_dirty';
  }

  return {
    ensure: ({ repo, base, threadId, from = null }) => guarded(async () => {
      if (!THREAD_ID.test(threadId)) throw new Error(`not a thread id: ${threadId}`);
      const path = join(root, threadId);
      const branch = worktreeBranch(threadId);
      const worktree: Worktree = { branch, base, path };
      return locks.with(threadId, async () => {
        const place = await found(repo, threadId, path, branch);
        if (place !== null) {
          if (!(await places.repair(place))) return fail({ code: 'worktree_tampered' });
          await recover(threadId, place);
          return ok(await used(worktree));
        }
        const refused = await checkRepository(repo, base);
        if (refused !== null) return fail(refused);
        await mkdir(root, { recursive: true });
        await make(repo, base, from, threadId, path, branch);
        if ((await found(repo, threadId, path, branch)) === null) throw new Error(`the worktree at ${path} could not be made`);
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
          if (!(await unused())) return false;
          const place = await placeOf({ branch: worktreeBranch(id), base: '', path });
          // `worktree remove` reads the worktree's `.git`: one an agent replaced is put back first.
          if (place === null || !(await places.repair(place))) return false;
          await plainIndex(place, worktreeBranch(id));
          await recover(id, place);
          // Files git refuses (an agent's): the worktree is kept rather than lose them.
          const committed = await commitAll(place, worktreeBranch(id), 'Work in progress, kept when the console removed this unused worktree').then(() => true, (error: unknown) => {
            if (error instanceof WorktreeUnreadableError) return false;
            throw error;
          });
          if (!committed) return false;
          const common = text(await git([...bare(place), 'rev-parse', '--path-format=absolute', '--git-common-dir']));
          await git([`--git-dir=${common}`, '-C', empty, 'worktree', 'remove', '--force', '--', path]);
          await places.forget(id);
          return true;
        });
        if (gone) removed.push(id);
      }
      return removed;
    },

    changes: (worktree) => guarded(() => onPlace(worktree, async (place) => {
      await settled(worktree, place);
      const { files } = await changedFiles(worktree, place);
      const counted = text(await git([...bare(place), 'rev-list', '--left-right', '--count', `refs/heads/${worktree.base}...refs/heads/${worktree.branch}`]));
      const [behind, ahead] = counted.split(/\s+/).map(Number);
      const changes: Changes = { base: worktree.base, branch: worktree.branch, ahead: ahead ?? 0, behind: behind ?? 0, files };
      return ok(changes);
    })),

    diff: (worktree, file, maxBytes) => guarded(() => onPlace(worktree, async (place) => {
      await settled(worktree, place);
      const { mergeBase, tree } = await endpoints(worktree, place);
      const paths = file === null ? [] : ['--', ...(file.old_path === undefined ? [] : [file.old_path]), file.path];
      try {
        const out = await git([...bare(place), 'diff-tree', ...NO_DRIVERS, '-p', '-M', '--no-commit-id', mergeBase, tree, ...paths], { maxBytes });
        return ok(out.stdout.toString('utf8'));
      } catch (error) {
        if (error instanceof GitOutputTooLargeError) return fail({ code: 'diff_too_large' });
        throw error;
      }
    })),

    async lines(worktree, file, from, to) {
      if (file.status === 'deleted' || file.binary) return null;
      const place = await placeOf(worktree);
      if (place === null) return null;
      await settled(worktree, place);
      const tree = await snapshot(place, worktree.branch).catch((error: unknown) => {
        if (error instanceof WorktreeUnreadableError) return null;
        throw error;
      });
      if (tree === null) return null;
      // Read from the snapshot's tree, never through the file system: a symbolic link is its target's name, not its target.
      const blob = await git([...bare(place), 'cat-file', 'blob', `${tree}:${file.path}`], { allow: [128], maxBytes: 8 * 1024 * 1024 }).catch(() => null);
      if (blob === null || blob.code !== 0) return null;
      return blob.stdout.toString('utf8').split('\n').slice(Math.max(0, from - 1), to);
    },

    merge: (worktree, { message, strategy }) => guarded(async () => locks.with(basename(worktree.path), () => onPlace(worktree, async (place) => {
      const threadId = basename(worktree.path);
      await recover(threadId, place);
      const identity = (await git([...bare(place), 'config', 'user.email'], { allow: [1] })).code === 0 ? {} : IDENTITY;
      // What the worktree holds, committed on its branch first.
      await commitAll(place, worktree.branch, message);
      // The branch by name, never the worktree's HEAD (its admin directory is a sandboxed agent's to write).
      const head = text(await git([...bare(place), 'rev-parse', '--verify', `refs/heads/${worktree.branch}^{commit}`]));
      const ref = `refs/heads/${worktree.base}`;
      const old = text(await git([...bare(place), 'rev-parse', '--verify', `${ref}^{commit}`]));
      // No index either: merge-tree reads attributes from the work tree and the index, and a merge driver they name would run.
      const noIndex = join(tmpdir(), `console-no-index-${randomUUID()}`);
      const merged = await git([...bare(place), 'merge-tree', '--write-tree', '--name-only', '--no-messages', '-z', old, head], { allow: [1], maxBytes: maxListBytes, env: { GIT_INDEX_FILE: noIndex } });
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
      if (tree === text(await git([...bare(place), 'rev-parse', `${old}^{tree}`]))) return ok({ commit: old, base: worktree.base });
      const parents = strategy === 'merge' ? ['-p', old, '-p', head] : ['-p', old];
      const commit = text(await git([...bare(place), 'commit-tree', tree, ...parents, '-m', message], { env: identity }));
      // A checkout of the base moves with it, as a push with updateInstead does: only when it is clean.
      const checkout = await checkoutOf(place, ref);
      if (checkout !== null) {
        const dirty = text(await git([...inTree(checkout), 'status', '--porcelain', '--untracked-files=no', '--ignore-submodules=all']));
        if (dirty !== '') return fail({ code: await movedOrDirty(threadId, ref, old, place, checkout) });
      }
      const journal = journalOf(threadId);
      const entry: MergeJournal = { at: worktree.path, ref, old, commit, head, strategy, checkout: checkout?.workTree ?? null, ...(checkout === null ? {} : { checkoutGitDir: checkout.gitDir }) };
      await mkdir(join(root, '.merges'), { recursive: true });
      await writeFile(`${journal}.tmp`, JSON.stringify(entry));
      await rename(`${journal}.tmp`, journal);
      const swapped = await git([...bare(place), 'update-ref', '-m', `console: ${strategy} ${worktree.branch}`, ref, commit, old], { allow: [1, 128] });
      if (swapped.code !== 0) {
        await rm(journal, { force: true });
        return fail({ code: 'base_moved' });
      }
      if (checkout !== null) {
        const moved = await git([...inTree(checkout), 'read-tree', '-u', '-m', old, commit], { allow: [128] });
        if (moved.code !== 0) {
          // Files in the way: the base goes back to where it was, and the checkout keeps what it had.
          await git([...bare(place), 'update-ref', ref, old, commit], { allow: [1, 128] });
          await rm(journal, { force: true });
          const code = await movedOrDirty(threadId, ref, old, place, checkout);
          return fail(code === 'base_moved' ? { code } : { code, detail: 'Files in the checkout of the base branch are in the way of the merge; nothing was merged' });
        }
      }
      // A squash leaves the branch beside the base: it moves to the squashed commit (the worktree holds
      // nothing uncommitted now), so the thread goes on from what was merged and shows no changes.
      if (strategy === 'squash') await moveBranch(place, worktree.branch, head, commit);
      await rm(journal, { force: true });
      return ok({ commit, base: worktree.base });
    }))),
  };

}
