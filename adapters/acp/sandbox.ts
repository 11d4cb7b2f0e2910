import { access, constants, lstat, mkdir, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { basename, delimiter, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { WORKTREE_BRANCH_PREFIX } from '../../domain/worktree.ts';

/**
 * How agents are confined with bubblewrap (docs/agents.md, "The sandbox"). Built once by the
 * composition root, after {@link probeSandbox} found a `bwrap` that can create namespaces here.
 */
export interface AgentSandbox {
  /** The `bwrap` executable. */
  readonly bwrap: string;
  /**
   * Paths the agent must not see, though the rest of the file system is readable: the service's
   * `DATA_DIR` (its database, every thread's worktree), its `HOME`, its `TMPDIR`, its world file. A
   * directory is covered by an empty tmpfs, a file by `/dev/null`; a path that does not exist is skipped.
   */
  readonly hide: readonly string[];
  /**
   * Directories shown again, read-only, although inside a hidden one: the service's own installation
   * (the demo agent runs from it) and Node's, which may live under the service's `HOME` (nvm).
   */
  readonly show: readonly string[];
  /** Where an agent whose `env` names no `HOME` gets one of its own: `<homes>/<agent id>`, kept across its processes. */
  readonly homes: string;
}

/** What one sandboxed agent process is: its argv and environment as the agent has them, and where it works. */
export interface SandboxedSpawn {
  readonly agentId: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** The agent's literal `env` (its own directories are named there). */
  readonly literals: Readonly<Record<string, string>>;
  /** The session's working directory: writable, as is its worktree's share of the repository. */
  readonly cwd: string;
  /** False: no network but a loopback of its own (`--unshare-net`). */
  readonly network: boolean;
}

/** A repository worktree's parts outside its directory, which a commit writes (git's `.git` file layout). */
interface WorktreeGit {
  /** The repository's common directory (`<repo>/.git`): read-only, its `config` and hooks above all. */
  readonly common: string;
  /** The worktree's admin directory (`<common>/worktrees/<name>`): its HEAD and index. */
  readonly admin: string;
  /** The directory holding the worktree's branch ref (`<common>/refs/heads/console`), when its HEAD is a thread's branch. */
  readonly refDir: string | null;
  /** The reflogs of its HEAD and its branch: removed, and kept from being made again (see {@link sandboxedSpawn}). */
  readonly reflogs: readonly string[];
}

/**
 * The names of an agent's literal `env` variables that are its own directories (writable in the
 * sandbox, made if missing): `HOME` and every `*_HOME` (`CODEX_HOME`, `XDG_CACHE_HOME`) set to an absolute path.
 */
const isOwnDirectory = (name: string, value: string) => (name === 'HOME' || name.endsWith('_HOME')) && isAbsolute(value);

/** A path with its symbolic links resolved (as mounts see it), or as given when it does not exist. */
const real = (path: string) => realpath(path).catch(() => resolve(path));

/** Whether `path` lies under `dir` (not `dir` itself). */
const under = (path: string, dir: string) => {
  const rel = relative(dir, path);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/** The worktree's git layout when `cwd` is a linked worktree (a `.git` file naming its admin directory), else null. */
async function worktreeGit(cwd: string): Promise<WorktreeGit | null> {
  const dotGit = await readFile(join(cwd, '.git'), 'utf8').catch(() => null);
  const gitdir = /^gitdir: (.+)$/m.exec(dotGit ?? '')?.[1]?.trim();
  if (gitdir === undefined) return null;
  const admin = resolve(cwd, gitdir);
  const common = resolve(admin, (await readFile(join(admin, 'commondir'), 'utf8').catch(() => '..')).trim());
  // The `.git` file is the agent's to write (between sandboxes, or where none ran before): what it names is made
  // writable only when it is a worktree admin directory of its repository that names this worktree back.
  const back = (await readFile(join(admin, 'gitdir'), 'utf8').catch(() => '')).trim();
  if (await real(admin) !== join(await real(common), 'worktrees', basename(await real(admin)))) return null;
  if (back === '' || await real(resolve(admin, back)) !== await real(join(cwd, '.git'))) return null;
  const ref = /^ref: (refs\/heads\/\S+)$/m.exec(await readFile(join(admin, 'HEAD'), 'utf8').catch(() => ''))?.[1];
  // HEAD is the agent's to write too: only a thread's branch is ever writable (never `main`), and a detached
  // HEAD moves no branch, so nothing of refs/ is writable then.
  const thread = ref !== undefined && ref.startsWith(`refs/heads/${WORKTREE_BRANCH_PREFIX}`) && !ref.split('/').includes('..');
  return {
    common,
    admin,
    refDir: thread ? dirname(join(common, ref)) : null,
    reflogs: [join(admin, 'logs', 'HEAD'), ...(thread ? [join(common, 'logs', ref)] : [])],
  };
}

/**
 * Fails as a spawn of `command` would (ENOENT, EACCES) when it is not an executable found as the agent's
 * `PATH` finds it: inside the sandbox bwrap would only exit with status 1, and the run's reason could
 * no longer say that the command was not found.
 */
async function findable(command: string | undefined, path: string): Promise<void> {
  if (command === undefined) throw Object.assign(new Error('spawn ENOENT'), { code: 'ENOENT' });
  const candidates = command.includes('/') ? [command] : path.split(delimiter).filter((dir) => dir !== '').map((dir) => join(dir, command));
  let found: NodeJS.ErrnoException | null = null;
  for (const candidate of candidates) {
    const denied = await access(candidate, constants.X_OK).then(() => null, (error: NodeJS.ErrnoException) => error);
    if (denied === null) return;
    if (found === null || denied.code === 'EACCES') found = denied;
  }
  const code = found?.code === 'EACCES' ? 'EACCES' : 'ENOENT';
  throw Object.assign(new Error(`spawn ${code}`), { code });
}

/**
 * The `bwrap` argv that runs `spawn.argv` confined, and its environment. Makes what must exist first
 * (the working directory, the agent's own directories, its worktree's ref directories). The order of
 * the mounts is the point: the whole file system read-only, the hidden paths covered, the shown ones
 * back, the writable ones bound over all that, and last the files that steer the service's own git
 * (the worktree's `.git` file, its admin directory's `commondir` and `gitdir`) read-only on top, so an
 * agent cannot point the service's later git commands at a configuration of its making.
 */
export async function sandboxedSpawn(sandbox: AgentSandbox, spawn: SandboxedSpawn): Promise<{ argv: string[]; env: Record<string, string> }> {
  const cwd = resolve(spawn.cwd);
  await findable(spawn.argv[0], spawn.env.PATH ?? '');
  const env: Record<string, string> = { ...spawn.env, TMPDIR: '/tmp' };
  // Never the service's HOME: the agent's own, from its env, or one kept for it.
  if (!(typeof spawn.literals.HOME === 'string' && isAbsolute(spawn.literals.HOME))) env.HOME = join(sandbox.homes, spawn.agentId.replace(/[^A-Za-z0-9._-]/g, '_'));
  const own = [env.HOME!, ...Object.entries(spawn.literals).filter(([name, value]) => name !== 'HOME' && isOwnDirectory(name, value)).map(([, value]) => value)];
  const git = await worktreeGit(cwd);
  const wanted = [...own, ...(git === null ? [] : [git.admin, join(git.common, 'objects'), ...(git.refDir === null ? [] : [git.refDir])]), cwd];
  for (const dir of wanted) await mkdir(dir, { recursive: true });
  if (git !== null) {
    // The service's own git writes in the admin directory later, outside the sandbox, and a file there that an
    // agent made a symbolic link (a reflog git appends to, a configuration it reads) would be written or read
    // through. So the admin directory's `logs` and `config.worktree` are read-only inside, and reflogs are
    // neither kept nor made (`core.logAllRefUpdates=false` below): an agent's commit cannot append to a read-only one.
    await mkdir(join(git.admin, 'logs'), { recursive: true });
    for (const reflog of git.reflogs) await rm(reflog, { force: true });
    await writeFile(join(git.admin, 'config.worktree'), '', { flag: 'a' });
    // After any the agent's own `env` gives (git reads GIT_CONFIG_KEY_0 … _<count-1>).
    const count = /^\d{1,3}$/.test(env.GIT_CONFIG_COUNT ?? '') ? Number(env.GIT_CONFIG_COUNT) : 0;
    env[`GIT_CONFIG_KEY_${count}`] = 'core.logAllRefUpdates';
    env[`GIT_CONFIG_VALUE_${count}`] = 'false';
    env.GIT_CONFIG_COUNT = String(count + 1);
  }
  const writable = [...new Set(await Promise.all(wanted.map(real)))];

  const args = ['--die-with-parent', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--cap-drop', 'ALL'];
  if (!spawn.network) args.push('--unshare-net');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  // The machine's daemons' sockets (Docker, D-Bus and through it systemd, a database's peer-authenticated
  // one) would let an agent act outside: /run goes, but for the resolver's file /etc/resolv.conf may link to.
  args.push('--tmpfs', '/run');
  if ((await lstat('/var/run').catch(() => null))?.isDirectory()) args.push('--tmpfs', '/var/run');
  const resolver = await realpath('/etc/resolv.conf').catch(() => null);
  if (resolver !== null && (resolver.startsWith('/run/') || resolver.startsWith('/var/run/'))) args.push('--ro-bind', resolver, resolver);
  const hide = async (path: string) => {
    const found = await stat(path).catch(() => null);
    if (found?.isDirectory()) args.push('--tmpfs', path);
    else if (found !== null) args.push('--ro-bind', '/dev/null', path);
  };
  const hidden = await Promise.all(sandbox.hide.map(real));
  const shown = await Promise.all(sandbox.show.map(real));
  for (const path of hidden) await hide(path);
  for (const dir of shown) args.push('--ro-bind', dir, dir);
  // A hidden path inside a shown one (DATA_DIR under the installation: `./.data`) is hidden again.
  for (const path of hidden.filter((p) => shown.some((dir) => under(p, dir)))) await hide(path);
  // A repository under a hidden path (a temporary directory) is still read: its objects, its config.
  if (git !== null) args.push('--ro-bind', await real(git.common), await real(git.common));
  for (const dir of writable) args.push('--bind', dir, dir);
  if (git !== null) {
    for (const file of [join(cwd, '.git'), join(git.admin, 'commondir'), join(git.admin, 'gitdir'), join(git.admin, 'config.worktree')]) {
      if ((await lstat(file).catch(() => null))?.isFile()) args.push('--ro-bind', await real(file), await real(file));
    }
    args.push('--ro-bind', await real(join(git.admin, 'logs')), await real(join(git.admin, 'logs')));
  }
  args.push('--chdir', cwd, '--');
  return { argv: [sandbox.bwrap, ...args, ...spawn.argv], env };
}
