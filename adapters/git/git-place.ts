import { randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { mkdir, open, readdir, realpath, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { text, type Git } from './run-git.ts';

/**
 * Where git finds one worktree, as the service computed it: never discovered from the worktree, whose
 * `.git` (and everything else in it) an agent can write. `gitDir` is the repository's admin directory
 * for it (`<repo>/.git/worktrees/<name>`), `workTree` its files, `config` the `-c` overrides that keep
 * every driver the repository's configuration defines from running on them.
 */
export interface GitPlace {
  readonly gitDir: string;
  readonly workTree: string;
  readonly config: readonly string[];
}

/** The arguments that run git on a place's files: its git dir and work tree given, never looked for. */
export const inTree = (place: GitPlace): string[] => [...place.config, `--git-dir=${place.gitDir}`, `--work-tree=${place.workTree}`, '-C', place.workTree];

/** Bounded, never through a link, never blocking on a FIFO: the text of a small regular file, or null. */
async function readPlain(path: string): Promise<string | null> {
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (handle === null) return null;
  try {
    if (!(await handle.stat()).isFile()) return null;
    const buffer = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } finally {
    await handle.close();
  }
}

/**
 * Copies `from` to `to` when it is a regular file, opened without following a link and without blocking on
 * a FIFO (what an agent could leave in a worktree's admin directory); false when it is not, or cannot be read.
 */
export async function copyPlain(from: string, to: string): Promise<boolean> {
  const handle = await open(from, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() => null);
  if (handle === null) return false;
  try {
    if (!(await handle.stat()).isFile()) return false;
    await writeFile(to, await handle.readFile());
    return true;
  } catch {
    return false;
  } finally {
    await handle.close();
  }
}

/**
 * The `-c` overrides that empty every filter the configuration read through `at` (`--git-dir=…`, or `-C`
 * a repository) defines: the repository's own, the operator's. A `.gitattributes` an agent wrote may name
 * one (`filter=lfs`), and git would run it on the agent's files. Diff drivers are kept off by
 * `--no-textconv --no-ext-diff`, merge drivers by merging with no work tree nor index (their commands
 * cannot be emptied: git would try to run the empty one and fail the merge).
 */
export async function driverOverrides(git: Git, at: readonly string[]): Promise<string[]> {
  const found = await git([...at, 'config', '--name-only', '--get-regexp', '^filter\\.'], { allow: [1] });
  const names = new Set<string>();
  for (const key of text(found).split('\n')) {
    const name = /^filter\.(.+)\.[^.]+$/s.exec(key)?.[1];
    if (name !== undefined) names.add(name);
  }
  return [...names].flatMap((name) => ['clean', 'smudge', 'process'].flatMap((key) => ['-c', `filter.${name}.${key}=`])
    .concat(['-c', `filter.${name}.required=false`]));
}

/**
 * What the console's git never does in a thread's worktree, whatever a configuration there says: sign a
 * commit (a `gpg.program` is a command, and a sandboxed agent's admin directory is its to write) or keep a
 * reflog (an agent sandbox keeps the worktree's reflogs read-only, so its own commits make none; a reflog
 * the console made would fail them).
 */
export const WORKTREE_CONFIG: readonly string[] = ['-c', 'commit.gpgSign=false', '-c', 'core.logAllRefUpdates=false'];

/**
 * The places of threads' worktrees under `root`, each recorded (`<root>/.git-dirs/<thread id>`, where no
 * agent writes) when the thread's worktree is checked, from the repository's list of its worktrees.
 */
export function gitPlaces(git: Git, root: string) {
  const records = join(root, '.git-dirs');

  /** The `.git` file git wrote at `path`, naming `gitDir`: what a checked worktree holds. */
  const dotGit = (gitDir: string) => `gitdir: ${gitDir}\n`;

  /** Where git records `path` as a worktree of the repository whose common dir is `common`, or null. */
  async function adminOf(common: string, path: string): Promise<string | null> {
    const wanted = new Set([join(path, '.git'), join(await realpath(path).catch(() => path), '.git')]);
    const base = join(common, 'worktrees');
    for (const name of await readdir(base).catch(() => [] as string[])) {
      const gitdir = await readPlain(join(base, name, 'gitdir'));
      if (gitdir !== null && wanted.has(gitdir.replace(/\n$/, ''))) return join(base, name);
    }
    return null;
  }

  /** Whether the admin directory `gitDir` still names `path` as its worktree, with `branch` checked out. */
  async function holds(gitDir: string, path: string, branch: string | null): Promise<boolean> {
    const gitdir = await readPlain(join(gitDir, 'gitdir'));
    if (gitdir === null) return false;
    const back = gitdir.replace(/\n$/, '');
    if (back !== join(path, '.git') && back !== join(await realpath(path).catch(() => path), '.git')) return false;
    if (branch === null) return true;
    const head = await readPlain(join(gitDir, 'HEAD'));
    return head === `ref: refs/heads/${branch}\n`;
  }

  async function place(gitDir: string, path: string): Promise<GitPlace> {
    return { gitDir, workTree: path, config: [...WORKTREE_CONFIG, ...(await driverOverrides(git, [`--git-dir=${gitDir}`]))] };
  }

  return {
    /**
     * The place of the worktree at `path` of repository `repo` with `branch` checked out, found in the
     * repository's admin directories (the operator's, never the worktree's `.git`) and recorded for the
     * thread; null when the repository holds no such worktree.
     */
    async find(repo: string, threadId: string, path: string, branch: string): Promise<GitPlace | null> {
      const common = await git(['-C', repo, 'rev-parse', '--path-format=absolute', '--git-common-dir'], { allow: [128] });
      if (common.code !== 0) return null;
      const gitDir = await adminOf(text(common), path);
      if (gitDir === null || !(await holds(gitDir, path, branch))) return null;
      if ((await readPlain(join(records, threadId))) !== gitDir) {
        await mkdir(records, { recursive: true });
        const temporary = join(records, `.${threadId}-${randomUUID()}`);
        await writeFile(temporary, gitDir);
        await rename(temporary, join(records, threadId));
      }
      return place(gitDir, path);
    },

    /** The recorded place of thread `threadId`'s worktree at `path`, while git still holds it there; else null. */
    async recorded(threadId: string, path: string, branch: string | null = null): Promise<GitPlace | null> {
      const gitDir = await readPlain(join(records, threadId));
      if (gitDir === null || !(await holds(gitDir, path, branch))) return null;
      return place(gitDir, path);
    },

    /**
     * The place of a checkout of the repository whose common dir is `common`: its main worktree (git dir:
     * the common dir itself) or a linked one (found in its admin directories); null when git holds none at `path`.
     */
    async checkout(common: string, path: string, main: boolean): Promise<GitPlace | null> {
      const gitDir = main ? common : await adminOf(common, path);
      return gitDir === null ? null : place(gitDir, path);
    },

    /** The place of the checkout a merge's journal named, by its git dir. */
    at: (gitDir: string, path: string): Promise<GitPlace> => place(gitDir, path),

    /** Forgets a thread's record (its worktree was removed). */
    forget: (threadId: string) => rm(join(records, threadId), { force: true }),

    /**
     * Makes the worktree's `.git` the file git wrote, naming its admin directory, whatever an agent put
     * there (a directory, a symbolic link, a file naming another repository or thread): what the agent's own
     * git and `git worktree` (prune, remove) read. Never written through a link (a new file is renamed over
     * it); a directory is moved out of the worktree, then removed. False when it could not be put back.
     */
    async repair(place: GitPlace): Promise<boolean> {
      const path = join(place.workTree, '.git');
      if ((await readPlain(path)) === dotGit(place.gitDir)) return true;
      const temporary = join(place.workTree, `.git.console-${randomUUID()}`);
      const aside = join(root, '.tampered', `${randomUUID()}`);
      try {
        await writeFile(temporary, dotGit(place.gitDir), { flag: 'wx' });
        await mkdir(join(root, '.tampered'), { recursive: true });
        // Whatever is there (a directory cannot be renamed over) goes aside, out of the worktree, first.
        const moved = await rename(path, aside).then(() => true, () => false);
        await rename(temporary, path);
        // What the agent put there goes; one it made hard to remove (no write permission) is left aside, harmless.
        if (moved) await rm(aside, { recursive: true, force: true }).catch(() => {});
        return (await readPlain(path)) === dotGit(place.gitDir);
      } catch {
        return false;
      } finally {
        await rm(temporary, { force: true });
      }
    },
  };
}

export type GitPlaces = ReturnType<typeof gitPlaces>;
