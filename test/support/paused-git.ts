import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const quote = (value: string) => `'${value.replaceAll("'", `'"'"'`)}'`;

/**
 * A directory holding a `git` wrapper: the first command whose arguments contain `step` writes the
 * `reached` marker and runs `hold` (shell lines, given the directory); every other command, and every
 * later one, is the real git.
 */
function stepWrapper(prefix: string, step: string, hold: (dir: string) => readonly string[]): { dir: string; marker: string } {
  const real = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const marker = join(dir, 'reached');
  writeFileSync(join(dir, 'git'), [
    '#!/bin/sh',
    `if [ ! -e ${quote(marker)} ]; then`,
    `  case " $* " in *${quote(` ${step} `)}*)`,
    `    : > ${quote(marker)}`,
    ...hold(dir).map((line) => `    ${line}`),
    '  esac',
    'fi',
    `exec ${quote(real)} "$@"`,
    '',
  ].join('\n'));
  chmodSync(join(dir, 'git'), 0o755);
  return { dir, marker };
}

/**
 * A `git` that stops at one step, for the service to be killed there: put its directory first on the
 * service's PATH. The first command whose arguments contain `step` (e.g. `worktree move`) is not run:
 * the wrapper writes its marker file and waits until the process that called it is gone (kill -9 of
 * the service), then exits as if killed with it. Every other command, and every later one, is git's.
 * A crash of the whole host at that point leaves the same state.
 */
export function pausedGit(step: string): { readonly dir: string; readonly reached: () => boolean; readonly path: (base: string) => string } {
  const { dir, marker } = stepWrapper('console-paused-git-', step, () => ['while kill -0 "$PPID" 2>/dev/null; do sleep 0.05; done', 'exit 137;;']);
  return { dir, reached: () => existsSync(marker), path: (base) => `${dir}:${base}` };
}

/** Waits until `check` holds, polling every 50 ms, for at most `ms`. */
export async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error(`not reached within ${ms} ms: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * A `git` that holds one step until the test lets it go, for a race to be played in a chosen order: the
 * first command whose arguments contain `step` writes its `reached` marker and waits until `release()`,
 * then runs as git; every other command, and every later one, is git's at once. Pass `binary` to the adapter.
 */
export function gatedGit(step: string): { readonly binary: string; readonly reached: () => boolean; readonly release: () => void } {
  let released = '';
  const { dir, marker } = stepWrapper('console-gated-git-', step, (at) => {
    released = join(at, 'released');
    return [`while [ ! -e ${quote(released)} ]; do sleep 0.02; done;;`];
  });
  return { binary: join(dir, 'git'), reached: () => existsSync(marker), release: () => writeFileSync(released, '') };
}
