import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after } from 'node:test';

/** `npm start` running in a process group of its own (npm, then the service it started). */
export interface NpmStarted {
  /** npm's pid, which is also the group's id. */
  readonly pid: number;
  readonly port: number;
}

/**
 * Runs `npm start` exactly as a user does, in its own process group, in memory mode on an
 * ephemeral port and a temporary DATA_DIR, and resolves once `/readyz` answers 200. Whatever is
 * left of the group when the test file ends is killed (unless `killAfterFile` is false: a caller that
 * starts it from a hook, where `after` would belong to the hook, kills the group `pid` itself). Its
 * stderr is shown with NPM_START_STDERR=1.
 */
export async function startNpm(env: Record<string, string> = {}, options: { killAfterFile?: boolean } = {}): Promise<NpmStarted> {
  const child = spawn('npm', ['start'], {
    detached: true,
    env: {
      ...process.env,
      PORT: '0',
      CONSOLE_STORAGE: 'memory',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'console-npm-')),
      ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1',
      ...env,
    },
    stdio: ['ignore', 'pipe', process.env.NPM_START_STDERR === '1' ? 'inherit' : 'ignore'],
  });
  const pid = child.pid!;
  if (options.killAfterFile !== false) {
    after(() => {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // already gone, as it should be
      }
    });
  }
  let port: number | undefined;
  // npm prints its own lines (`> agent-console-service@… start`) before the service's JSON log.
  for await (const line of createInterface({ input: child.stdout! })) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line);
    if (entry.msg === 'console service listening') {
      port = Number(new URL(entry.url).port);
      break;
    }
  }
  if (port === undefined) throw new Error('npm start never listened');
  child.stdout!.resume();
  const readyPort = port;
  await waitUntil(async () => (await fetch(`http://127.0.0.1:${readyPort}/readyz`).catch(() => null))?.status === 200, 10_000, '/readyz never answered 200');
  return { pid, port };
}

/** Whether any live (not zombie) process is in the process group `pgid`, read from /proc. */
export function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it ended while we looked
    }
    // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses, so split after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/** Polls `check` every 50 ms until it holds; fails with `message` after `ms`. */
export async function waitUntil(check: () => boolean | Promise<boolean>, ms: number, message: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${message} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
