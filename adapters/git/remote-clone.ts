import { createHash, randomUUID } from 'node:crypto';
import { lstat, mkdir, rename, rm } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkpointRefs, isBranchName, isRepositoryUrl, worktreeBranch } from '../../domain/worktree.ts';
import type { GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import { NO_DRIVERS, type WorktreeSite } from './worktree-site.ts';
import { noteUnpushed, unpushed } from './current-checkpoint.ts';
import { TRAILER, trailer, withTrailer } from './checkpoint-trailers.ts';
import { IDENTITY } from './worktree-commits.ts';

/**
 * Projects whose `repo` is a git URL (contract section 8, "More than one machine"): each instance keeps a bare clone
 * of its own at `<root>/.repos/<hash of the URL>.git`, fetched before a thread's worktree is used, and pushes a
 * thread's branch with its checkpoint at the end of every turn, and a merged base. The remote is where the work
 * lives; `DATA_DIR` is a cache an instance may lose.
 */

/** The variables of the service's environment a remote command may use for its credentials: ssh's, an askpass, git's own configuration by environment. */
const CREDENTIAL_VARIABLES = ['HOME', 'SSH_AUTH_SOCK', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_ASKPASS', 'SSH_ASKPASS'];

/** What a command that talks to the remote runs with: only safe transports, the credentials the environment gives. */
function remote(): { readonly config: string[]; readonly env: Record<string, string>; readonly timeoutMs: number } {
  const env: Record<string, string> = {};
  for (const name of CREDENTIAL_VARIABLES) {
    const value = process.env[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  // Configuration by environment (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_<n>`, `GIT_CONFIG_VALUE_<n>`): an operator's credential helper or header.
  const count = Number(process.env.GIT_CONFIG_COUNT ?? 0);
  if (Number.isInteger(count) && count > 0 && count < 100) {
    env.GIT_CONFIG_COUNT = String(count);
    for (let i = 0; i < count; i += 1) {
      for (const part of ['KEY', 'VALUE']) {
        const value = process.env[`GIT_CONFIG_${part}_${i}`];
        if (value !== undefined) env[`GIT_CONFIG_${part}_${i}`] = value;
      }
    }
  }
  // ssh never prompts (no terminal is there to answer): an operator's own command is theirs to make so.
  if (env.GIT_SSH_COMMAND === undefined && env.GIT_SSH === undefined) env.GIT_SSH_COMMAND = 'ssh -o BatchMode=yes';
  return { config: ['-c', 'protocol.ext.allow=never', '-c', 'protocol.fd.allow=never', '-c', 'http.followRedirects=false'], env, timeoutMs: NETWORK_TIMEOUT_MS };
}

/** A fetch or push talks to a remote over a network: 60 s, not the 30 s of a local command; a first clone, 10 minutes. */
const NETWORK_TIMEOUT_MS = 60_000;
const CLONE_TIMEOUT_MS = 10 * 60_000;

/** The URL as an answer may name it: no user name (a token may be given as one). */
const shown = (url: string): string => url.replace(/^([a-z]+:\/\/)[^@/]*@/, '$1').replace(/^[A-Za-z0-9._-]+@([A-Za-z0-9.-]+:)/, '$1');

/** Where this instance keeps its clone of `url`. */
export const cloneOf = (site: WorktreeSite, url: string): string =>
  join(site.root, '.repos', `${createHash('sha256').update(url).digest('hex').slice(0, 24)}.git`);

/** Whether the repository whose common dir is `common` is one of this instance's clones (its remote is where the work lives). */
export const isClone = (site: WorktreeSite, common: string): boolean => resolve(common).startsWith(`${join(site.root, '.repos')}${sep}`);

/** The common dir of a worktree's repository. */
export const commonDirOf = async (site: WorktreeSite, place: GitPlace): Promise<string> =>
  text(await site.git([...site.bare(place), 'rev-parse', '--path-format=absolute', '--git-common-dir']));

const unavailable = (url: string, what: string): Failure => ({ code: 'repository_unavailable', detail: `${shown(url)} cannot be reached (${what}): try again when it can` });

/**
 * The repository a project's `repo` names on this instance: a path as it is; a URL's clone, made when missing and
 * fetched (its branches as `origin/…`, the thread's checkpoints as they are), with the local `base` and the thread's
 * branch brought to the remote's where nothing here holds them ahead. `repository_unavailable` when the remote
 * cannot be reached: nothing then runs, or is read, on a copy that may be stale.
 */
export async function localRepository(site: WorktreeSite, repo: string, input: { readonly base: string; readonly threadId: string | null }): Promise<Result<string, Failure>> {
  if (!isRepositoryUrl(repo)) return ok(repo);
  const { git } = site;
  const { config, env, timeoutMs } = remote();
  const dir = cloneOf(site, repo);
  if (!(await lstat(dir).then(() => true, () => false))) {
    await mkdir(join(site.root, '.repos'), { recursive: true });
    const temporary = join(site.root, '.repos', `.tmp-${randomUUID()}`);
    try {
      const cloned = await git([...config, 'clone', '--bare', '--quiet', '--no-tags', '--', repo, temporary], { env, timeoutMs: CLONE_TIMEOUT_MS, allow: [128] });
      if (cloned.code !== 0) return fail(unavailable(repo, 'clone'));
      await git([`--git-dir=${temporary}`, 'config', 'remote.origin.fetch', '+refs/heads/*:refs/remotes/origin/*']);
      // Two callers at once: the first rename wins, the other's clone goes (below).
      await rename(temporary, dir).catch(() => {});
    } finally {
      // A clone that failed, timed out or lost the race leaves nothing behind.
      await rm(temporary, { recursive: true, force: true });
    }
  }
  const specs = ['+refs/heads/*:refs/remotes/origin/*'];
  if (input.threadId !== null) specs.push(`${checkpointRefs(input.threadId)}*:${checkpointRefs(input.threadId)}*`, `+refs/console/latest/${input.threadId}/*:refs/console/origin-latest/${input.threadId}/*`);
  // Exit 1: a checkpoint ref that differs here (a turn of a crashed instance, never pushed) is kept as it is; the rest came.
  // A checkpoint of this instance's the remote did not take yet (it was not reached at the turn's end): pushed first.
  const owed = input.threadId === null ? null : await unpushed(site, input.threadId);
  // Refused there (another instance's turn moved the thread since): rebuilt on the remote's latest, else set aside and
  // told, never dropped; either way the thread goes on from the remote's latest.
  if (owed !== null) {
    const pushed = await pushOrRebuild(site, dir, input.threadId!, owed);
    if (pushed === 'unreachable') return fail(unavailable(repo, 'push'));
    await noteUnpushed(site, input.threadId!, null);
    if (pushed === 'set-aside') return fail(setAside(input.threadId!, owed));
  }
  const fetched = await git([`--git-dir=${dir}`, ...config, 'fetch', '--quiet', '--no-tags', 'origin', ...specs], { env, timeoutMs, allow: [1, 128] });
  if (fetched.code === 128) return fail(unavailable(repo, 'fetch'));
  const branches = [input.base, ...(input.threadId === null ? [] : [worktreeBranch(input.threadId)])].filter(isBranchName);
  // Both sides of every branch in one read (the common case moves nothing, so it costs one git process, not four).
  const commits = await commitsOf(site, dir, branches.flatMap((branch) => [`refs/remotes/origin/${branch}`, `refs/heads/${branch}`]));
  for (const branch of branches) {
    const theirs = commits.get(`refs/remotes/origin/${branch}`);
    if (theirs === undefined) continue;
    const ours = commits.get(`refs/heads/${branch}`);
    // The base follows the remote's (nothing here commits on it but a merge, which pushes it); a thread's branch is
    // made from the remote's when missing (a checkpoint restore moves it where the latest checkpoint says, and a
    // worktree that holds the latest follows the remote's when a merge moved it: worktree-restore.ts).
    if (ours === undefined || (branch === input.base && ours !== theirs)) await git([`--git-dir=${dir}`, 'update-ref', `refs/heads/${branch}`, theirs]);
  }
  return ok(dir);
}

/** The commits these refs of clone `dir` name, by ref: a ref that is missing, or names no commit, is left out. */
async function commitsOf(site: WorktreeSite, dir: string, refs: readonly string[]): Promise<Map<string, string>> {
  const listed = await site.git([`--git-dir=${dir}`, 'for-each-ref', '--format=%(objecttype) %(objectname) %(refname)', ...refs]);
  const wanted = new Set(refs);
  const commits = new Map<string, string>();
  for (const line of text(listed).split('\n')) {
    const [type, commit, ref] = line.split(' ', 3);
    // A pattern also lists the refs below it (`main` lists `main/x`): the asked-for ones only.
    if (type === 'commit' && commit !== undefined && ref !== undefined && wanted.has(ref)) commits.set(ref, commit);
  }
  return commits;
}

/** How a push went: taken, refused by the remote (another instance moved the branch since), or not reached. */
export type Pushed = 'pushed' | 'rejected' | 'unreachable';

/** The remote's pointer to a thread's latest checkpoint, and where a clone keeps what it last fetched of it. */
export const latestRef = (threadId: string): string => `refs/console/latest/${threadId}/checkpoint`;
export const fetchedLatestRef = (threadId: string): string => `refs/console/origin-latest/${threadId}/checkpoint`;

/** What clone `common` last fetched of `ref` on the remote (`tracking`), or '' when the remote had none. */
async function known(site: WorktreeSite, common: string, tracking: string): Promise<string> {
  const found = await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', '--quiet', `${tracking}^{commit}`], { allow: [1] });
  return found.code === 0 ? text(found) : '';
}

/**
 * Pushes the thread's checkpoint `ref` to the remote of clone `common`, atomically with the thread's branch and the
 * remote's pointer to its latest checkpoint, each with a lease on what this clone last fetched of it: a
 * compare-and-swap, so of two instances racing after a crash one wins, and the other is told (`rejected`).
 */
export async function pushCheckpoint(site: WorktreeSite, common: string, threadId: string, ref: string, head?: string): Promise<Pushed> {
  const { config, env, timeoutMs } = remote();
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
  const { config, env, timeoutMs } = remote();
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
  const known = await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', '--quiet', `refs/remotes/origin/${branch}^{commit}`], { allow: [1] });
  const ours = text(await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', `refs/heads/${branch}^{commit}`]));
  const pushed = await pushRef(site, common, `refs/heads/${branch}`, known.code === 0 ? text(known) : '', ours);
  if (pushed === 'pushed') await site.git([`--git-dir=${common}`, 'update-ref', `refs/remotes/origin/${branch}`, ours]);
  return pushed;
}

/**
 * Moves `ref` of the remote of clone `common` from `old` (what it held when the merge began) to `commit`: a merged
 * base pushed before this clone's own moves. `rejected` when the remote's `ref` is no longer `old` (another
 * instance's merge meanwhile wins), `unreachable` when the remote was not reached (git's exit 128).
 */
export async function pushRef(site: WorktreeSite, common: string, ref: string, old: string, commit: string): Promise<Pushed> {
  const { config, env, timeoutMs } = remote();
  const pushed = await site.git([`--git-dir=${common}`, ...config, 'push', '--quiet', '--porcelain', `--force-with-lease=${ref}:${old}`, 'origin', `${commit}:${ref}`], { env, timeoutMs, allow: [1, 128] });
  return pushed.code === 0 ? 'pushed' : pushed.code === 128 ? 'unreachable' : 'rejected';
}

/** `repository_unavailable` for the remote of clone `common`, named as an answer may name it. */
export async function remoteUnavailable(site: WorktreeSite, common: string, what: string): Promise<Failure> {
  const url = await site.git([`--git-dir=${common}`, 'config', '--get', 'remote.origin.url'], { allow: [1] });
  return unavailable(url.code === 0 ? text(url) : 'the remote', what);
}
