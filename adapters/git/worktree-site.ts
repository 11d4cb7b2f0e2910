import { basename, join, resolve } from 'node:path';
import { lstat, mkdir, rm } from 'node:fs/promises';
import type { Failure } from '../../domain/errors.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Worktree } from '../../domain/model.ts';
import { fail, type Result } from '../../domain/result.ts';
import { gitPlaces, type GitPlace, type GitPlaces } from './git-place.ts';
import { gitRunner, text, type Git } from './run-git.ts';
import { threadLocks } from './thread-lock.ts';

/**
 * Where the threads' worktrees live and how git is run on them: what making, reading, merging and
 * sweeping them share. Built once per {@link gitWorktrees}.
 */
export interface WorktreeSite {
  /** The directory of the worktrees (`<root>/<thread id>`), their locks, places and merge journals. */
  readonly root: string;
  readonly git: Git;
  /** A lock per thread, in this process and between processes. */
  readonly locks: ReturnType<typeof threadLocks>;
  readonly places: GitPlaces;
  /** A work tree of the service's own, always empty: where commands that need no worktree's files run. */
  readonly empty: string;
  /** The arguments that run git on a place's repository with no file (nor attribute) of its worktree. */
  readonly bare: (place: GitPlace) => string[];
  /** Bytes of a changes listing (each of its two git outputs) past which it is refused `changes_too_large`. */
  readonly maxListBytes: number;
}

/** The options of {@link worktreeSite}, those of `gitWorktrees`. */
export interface WorktreeSiteOptions {
  readonly root: string;
  readonly timeoutMs?: number;
  readonly binary?: string;
  /** Bytes of a changes listing (each of its two git outputs) past which it is refused `changes_too_large` (32 MiB). */
  readonly maxListBytes?: number;
  /** The time of the locks' heartbeats and waits (the host's unless told: a test moves it). */
  readonly clock?: Pick<Clock, 'now' | 'every'>;
}

/** The tail of the `git worktree` commands under way in this process: each waits for the one before. */
let worktreeCommands: Promise<unknown> = Promise.resolve();

/**
 * `git worktree` commands one at a time in this process. Each reads the admin files of every worktree of
 * its repository (`add` to refuse a branch checked out elsewhere, `list`, `prune`), and dies on one that
 * another `add` is still writing ("failed to read .git/worktrees/…/commondir"): two threads of one
 * repository made at once failed so. Other git commands run as they come.
 */
function oneWorktreeCommandAtATime(git: Git): Git {
  return ((args, options) => {
    if (!args.includes('worktree')) return git(args, options);
    const run = worktreeCommands.then(() => git(args, options));
    worktreeCommands = run.catch(() => {});
    return run;
  }) as Git;
}

/** The site under `options.root`, with its git runner (30 s time-out unless told), locks and places. */
export function worktreeSite(options: WorktreeSiteOptions): WorktreeSite {
  const root = resolve(options.root);
  const git = oneWorktreeCommandAtATime(gitRunner({ timeoutMs: options.timeoutMs ?? 30_000, ...(options.binary === undefined ? {} : { binary: options.binary }) }));
  const empty = join(root, '.empty');
  return {
    root,
    git,
    locks: threadLocks(join(root, '.locks'), ...(options.clock === undefined ? [] : [options.clock])),
    places: gitPlaces(git, root),
    empty,
    bare: (place) => [...place.config, `--git-dir=${place.gitDir}`, `--work-tree=${empty}`, '-C', empty],
    maxListBytes: options.maxListBytes ?? 32 * 1024 * 1024,
  };
}

/** Thread ids become path segments and branch names: only a UUID is taken. */
export const THREAD_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * Diffs show what changed, never what a driver makes of it; and a submodule is a commit id, its
 * `.gitmodules` entry never read (git dies on one an agent wrote with `update = !command`).
 */
export const NO_DRIVERS = ['--no-ext-diff', '--no-textconv', '--ignore-submodules=none'];

/** The place of a worktree the thread's last check found (ensure runs before every read and merge); null when git no longer holds it there. */
export async function placeOf(site: WorktreeSite, worktree: Worktree, anyHead = false): Promise<GitPlace | null> {
  await mkdir(site.empty, { recursive: true });
  return site.places.recorded(basename(worktree.path), worktree.path, anyHead ? null : worktree.branch);
}

/**
 * Runs `body` on the worktree's place, or answers `worktree_tampered` when it has none. `anyHead`: whatever
 * branch the worktree's HEAD names, or none (what never reads HEAD: a checkpoint, made from the files).
 */
export async function onPlace<T>(site: WorktreeSite, worktree: Worktree, body: (place: GitPlace) => Promise<Result<T, Failure>>, anyHead = false): Promise<Result<T, Failure>> {
  const place = await placeOf(site, worktree, anyHead);
  if (place === null) return fail({ code: 'worktree_tampered', detail: `git holds no worktree at ${worktree.path} on ${worktree.branch}: its next turn or read makes it again` });
  await plainIndex(site, place, worktree.branch);
  return body(place);
}

/**
 * Makes the worktree's index a file again when a sandboxed agent (whose admin directory it is) left
 * something else there (a FIFO every git command would block on until its time-out, a link): rebuilt
 * from the branch, as a new worktree's is; the files themselves are untouched.
 */
export async function plainIndex(site: WorktreeSite, place: GitPlace, branch: string): Promise<void> {
  const index = join(place.gitDir, 'index');
  const found = await lstat(index).catch(() => null);
  if (found === null || found.isFile()) return;
  await rm(index, { recursive: true, force: true });
  await site.git([...site.bare(place), 'read-tree', `refs/heads/${branch}`]);
}

/** The worktrees git lists through `prefix` (a repository, or a place): path, branch (`refs/heads/…`, or null when detached), whether the main one. */
export async function listed(site: WorktreeSite, prefix: readonly string[]): Promise<{ path: string; branch: string | null; main: boolean }[]> {
  const out = (await site.git([...prefix, 'worktree', 'list', '--porcelain', '-z'])).stdout.toString('utf8');
  const entries: { path: string; branch: string | null; main: boolean }[] = [];
  for (const line of out.split('\0')) {
    if (line.startsWith('worktree ')) entries.push({ path: line.slice('worktree '.length), branch: null, main: entries.length === 0 });
    else if (line.startsWith('branch ') && entries.length > 0) entries[entries.length - 1]!.branch = line.slice('branch '.length);
  }
  return entries;
}

/** The place of the checkout of `ref` in the repository of `place` (its main worktree, or a linked one), or null when none has it checked out. */
export async function checkoutOf(site: WorktreeSite, place: GitPlace, ref: string): Promise<GitPlace | null> {
  const entry = (await listed(site, site.bare(place))).find((candidate) => candidate.branch === ref) ?? null;
  if (entry === null) return null;
  const common = text(await site.git([...site.bare(place), 'rev-parse', '--path-format=absolute', '--git-common-dir']));
  return site.places.checkout(common, entry.path, entry.main);
}
