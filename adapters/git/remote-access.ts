import { createHash } from 'node:crypto';
import { join, resolve, sep } from 'node:path';
import type { Failure } from '../../domain/errors.ts';
import type { GitPlace } from './git-place.ts';
import { text } from './run-git.ts';
import type { WorktreeSite } from './worktree-site.ts';

/**
 * How this instance reaches a project's remote (contract section 8): the commands' transports, credentials and
 * time-outs, where its clone of a URL lives, the refs it keeps of what it last fetched, and a ref moved on the remote
 * with a lease. The clone itself: remote-clone.ts; a checkpoint's push: remote-push.ts.
 */

/** The variables of the service's environment a remote command may use for its credentials: ssh's, an askpass, git's own configuration by environment. */
const CREDENTIAL_VARIABLES = ['HOME', 'SSH_AUTH_SOCK', 'GIT_SSH', 'GIT_SSH_COMMAND', 'GIT_ASKPASS', 'SSH_ASKPASS'];

/** What a command that talks to the remote runs with: only safe transports, the credentials the environment gives. */
export function remoteCommand(): { readonly config: string[]; readonly env: Record<string, string>; readonly timeoutMs: number } {
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
export const CLONE_TIMEOUT_MS = 10 * 60_000;

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

export const unavailable = (url: string, what: string): Failure => ({ code: 'repository_unavailable', detail: `${shown(url)} cannot be reached (${what}): try again when it can` });

/** How a push went: taken, refused by the remote (another instance moved the branch since), or not reached. */
export type Pushed = 'pushed' | 'rejected' | 'unreachable';

/** The remote's pointer to a thread's latest checkpoint, and where a clone keeps what it last fetched of it. */
export const latestRef = (threadId: string): string => `refs/console/latest/${threadId}/checkpoint`;
export const fetchedLatestRef = (threadId: string): string => `refs/console/origin-latest/${threadId}/checkpoint`;

/** What clone `common` last fetched of `ref` on the remote (`tracking`), or '' when the remote had none. */
export async function known(site: WorktreeSite, common: string, tracking: string): Promise<string> {
  const found = await site.git([`--git-dir=${common}`, 'rev-parse', '--verify', '--quiet', `${tracking}^{commit}`], { allow: [1] });
  return found.code === 0 ? text(found) : '';
}

/**
 * Moves `ref` of the remote of clone `common` from `old` (what it held when the merge began) to `commit`: a merged
 * base pushed before this clone's own moves. `rejected` when the remote's `ref` is no longer `old` (another
 * instance's merge meanwhile wins), `unreachable` when the remote was not reached (git's exit 128).
 */
export async function pushRef(site: WorktreeSite, common: string, ref: string, old: string, commit: string): Promise<Pushed> {
  const { config, env, timeoutMs } = remoteCommand();
  const pushed = await site.git([`--git-dir=${common}`, ...config, 'push', '--quiet', '--porcelain', `--force-with-lease=${ref}:${old}`, 'origin', `${commit}:${ref}`], { env, timeoutMs, allow: [1, 128] });
  return pushed.code === 0 ? 'pushed' : pushed.code === 128 ? 'unreachable' : 'rejected';
}

/** `repository_unavailable` for the remote of clone `common`, named as an answer may name it. */
export async function remoteUnavailable(site: WorktreeSite, common: string, what: string): Promise<Failure> {
  const url = await site.git([`--git-dir=${common}`, 'config', '--get', 'remote.origin.url'], { allow: [1] });
  return unavailable(url.code === 0 ? text(url) : 'the remote', what);
}
