import { execFile } from 'node:child_process';

/** What one git command answered: its exit status and its output, as bytes. */
export interface GitOutput {
  readonly code: number;
  readonly stdout: Buffer;
  readonly stderr: string;
}

/** git could not be run: not installed (ENOENT), or it did not finish in time. */
export class GitUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'GitUnavailableError';
  }
}

/** A command's output went past its bound (the child was killed). */
export class GitOutputTooLargeError extends Error {
  constructor() {
    super('git output is larger than its bound');
    this.name = 'GitOutputTooLargeError';
  }
}

/** The command's name and first argument, past git's own options (`-c`, `-C`, `--git-dir=…`). */
function command(args: readonly string[]): string {
  let i = 0;
  while (i < args.length && args[i]!.startsWith('-')) i += args[i] === '-c' || args[i] === '-C' ? 2 : 1;
  return args.slice(i, i + 2).join(' ');
}

/** A git command that failed in a way its caller did not expect. */
export class GitFailedError extends Error {
  constructor(readonly args: readonly string[], readonly output: GitOutput) {
    super(`git ${command(args)} exited ${output.code}: ${output.stderr.trim().slice(0, 500)}`);
    this.name = 'GitFailedError';
  }
}

export interface GitOptions {
  /** Bytes of stdout kept; past it the command is killed and {@link GitOutputTooLargeError} thrown. */
  readonly maxBytes?: number;
  /** Variables added to git's environment (an index file, an identity). */
  readonly env?: Readonly<Record<string, string>>;
  /** Exit statuses that are answers, not failures (0 always is). */
  readonly allow?: readonly number[];
  /** This command's time-out, when it is not the runner's (a clone or a fetch over a network). */
  readonly timeoutMs?: number;
}

/**
 * Runs `git` with an argument array (no shell), a time-out, bounded output and an environment of
 * its own: nothing of the service's but `PATH` and `TMPDIR` (no `HOME`: no user's configuration,
 * attributes or ignore files); no prompt, no pager, no hooks, no fsmonitor, no system or global
 * configuration or attributes, no recursion into submodules, pathspecs taken literally, messages in English.
 * Which repository a command works on is its caller's to say (`--git-dir`, `--work-tree`): see git-place.ts.
 */
export function gitRunner(options: { readonly timeoutMs: number; readonly binary?: string }) {
  const binary = options.binary ?? 'git';
  const base: Record<string, string> = {
    GIT_TERMINAL_PROMPT: '0', GIT_PAGER: 'cat', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_ATTR_NOSYSTEM: '1',
    GIT_LITERAL_PATHSPECS: '1', GIT_OPTIONAL_LOCKS: '0', LC_ALL: 'C',
  };
  for (const name of ['PATH', 'TMPDIR'] as const) {
    const value = process.env[name];
    if (value !== undefined) base[name] = value;
  }
  // Hooks, fsmonitor and submodules' own git are programs or configuration a worktree can bring: the console
  // runs none of them. The rest of what could run a command (filters, diff and merge drivers) is its caller's (git-place.ts).
  const fixed = [
    '-c', 'core.hooksPath=/dev/null', '-c', 'core.fsmonitor=false', '-c', 'core.attributesFile=/dev/null', '-c', 'submodule.recurse=false',
    '-c', 'core.quotePath=false', '-c', 'color.ui=false',
  ];

  return function git(args: readonly string[], opts: GitOptions = {}): Promise<GitOutput> {
    const maxBytes = opts.maxBytes ?? 4 * 1024 * 1024;
    return new Promise((resolve, reject) => {
      execFile(binary, [...fixed, ...args], {
        encoding: 'buffer', timeout: opts.timeoutMs ?? options.timeoutMs, killSignal: 'SIGKILL', maxBuffer: maxBytes, windowsHide: true,
        env: { ...base, ...opts.env },
      }, (error, stdout, stderr) => {
        const output: GitOutput = { code: 0, stdout, stderr: stderr.toString('utf8') };
        if (error === null) return resolve(output);
        const failure = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean; signal?: string | null };
        if (failure.code === 'ENOENT') return reject(new GitUnavailableError('git is not installed on this host', { cause: error }));
        if (failure.code === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER') return reject(new GitOutputTooLargeError());
        if (failure.killed === true || failure.signal != null) {
          return reject(new GitUnavailableError(`git did not finish within ${opts.timeoutMs ?? options.timeoutMs} ms`, { cause: error }));
        }
        const code = typeof failure.code === 'number' ? failure.code : 1;
        const answered = { ...output, code };
        if (opts.allow?.includes(code) === true) return resolve(answered);
        reject(new GitFailedError(args, answered));
      });
    });
  };
}

export type Git = ReturnType<typeof gitRunner>;

/** A command's stdout as text, without its trailing newline. */
export const text = (output: GitOutput): string => output.stdout.toString('utf8').replace(/\n$/, '');
