import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { git, write } from '../support/git-repo.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { serviceEntry } from '../support/built.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
export const TOKEN = 'agent-tier-alice';
const AUTH = { authorization: `Bearer ${TOKEN}` };
/** One project per scenario, so no scenario sees another's files. */
export const PROJECTS = ['approve', 'posture', 'refuse', 'plain', 'steer'] as const;
/** The repository project (contract section 8): a git repository made in the scratch directory, each thread in a worktree of its own. */
export const REPO_PROJECT = 'repo';

/** A world file's agent entry (contract section 6). */
export interface WorldAgent {
  readonly id: string;
  readonly command: readonly string[];
  readonly env?: Record<string, string>;
  readonly env_pass?: readonly string[];
  readonly models?: readonly string[];
  readonly efforts?: readonly string[];
  readonly permission_modes?: readonly string[];
  readonly default_permission_mode?: string;
}

/** The service as `npm start` runs it (src/main.ts in a child process), in memory mode. */
export interface Service {
  readonly port: number;
  /** The service's JSON log so far, one line each (the agents' stderr included): for failure messages. */
  log(): string[];
  /** SIGTERM, then SIGKILL after 12 s; resolves once it has exited. */
  stop(): Promise<void>;
  api(method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  live(thread: string): Promise<LiveClient>;
}

/** A scratch directory for one agent's test file; removed by {@link removeScratch}. */
export const scratchDir = (name: string): string => mkdtempSync(join(tmpdir(), `agent-tier-${name}-`));
export const removeScratch = (dir: string): void => rmSync(dir, { recursive: true, force: true });

/**
 * Starts src/main.ts with a world of one agent in the console channel and returns once it listens.
 * The service's environment is built here, not inherited (`extraEnv` adds secrets for `env_pass`).
 */
export async function startService(scratch: string, agent: WorldAgent, extraEnv: Record<string, string> = {}): Promise<Service> {
  const world = {
    users: [{ id: 'alice', name: 'Alice', token: TOKEN }],
    projects: [...PROJECTS, { name: REPO_PROJECT, repo: gitRepository(join(scratch, 'repo')), base: 'main' }],
    agents: [agent],
    channels: [{ id: 'console', kind: 'console', name: 'Console', agents: [agent.id], linked_users: ['alice'] }],
  };
  const worldFile = join(scratch, 'world.json');
  writeFileSync(worldFile, JSON.stringify(world, null, 2));
  const home = join(scratch, 'service-home');
  mkdirSync(home, { recursive: true });
  const child = spawn(process.execPath, [serviceEntry()], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: home,
      LANG: 'C.UTF-8',
      TMPDIR: process.env.TMPDIR ?? '/tmp',
      HOST: '127.0.0.1',
      PORT: '0',
      CONSOLE_STORAGE: 'memory',
      CONSOLE_WORLD: worldFile,
      DATA_DIR: join(scratch, 'data'),
      ARTIFACT_SANDBOX_ORIGIN: '',
      LOG_LEVEL: 'debug',
      ...extraEnv,
    },
  });
  const lines: string[] = [];
  child.stderr!.on('data', (chunk) => lines.push(String(chunk).trimEnd()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let port: number | undefined;
  const reader = createInterface({ input: child.stdout! });
  const listening = new Promise<number>((resolve, reject) => {
    reader.on('line', (line) => {
      lines.push(line);
      if (lines.length > 20_000) lines.splice(0, 10_000);
      if (port === undefined && line.includes('"console service listening"')) {
        port = Number(new URL(JSON.parse(line).url).port);
        resolve(port);
      }
    });
    void exited.then(() => reject(new Error(`the service exited before listening:\n${lines.slice(-20).join('\n')}`)));
    setTimeout(() => reject(new Error('the service did not listen within 30 s')), 30_000).unref();
  });
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // already gone
    }
  };
  const stop = async () => {
    signal('SIGTERM');
    const hard = setTimeout(() => signal('SIGKILL'), 12_000);
    await exited;
    clearTimeout(hard);
  };
  try {
    await listening;
  } catch (error) {
    await stop();
    throw error;
  }
  const base = `http://127.0.0.1:${port}/api/console`;
  return {
    port: port!,
    log: () => [...lines],
    stop,
    async api(method, path, body) {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
        body: body !== undefined ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, json: text === '' ? null : JSON.parse(text) };
    },
    async live(thread) {
      const client = await connectLive(port!, { thread, after: '0' }, AUTH);
      if ('refused' in client) throw new Error(`the live socket was refused with ${client.refused}`);
      return client;
    },
  };
}

/** A git repository at `dir` with one commit on `main` (a README); answers `dir`. */
function gitRepository(dir: string): string {
  mkdirSync(dir, { recursive: true });
  git(dir, 'init', '--quiet', '--initial-branch=main');
  write(dir, 'README.md', '# Agent tier\n');
  git(dir, 'add', '--all');
  git(dir, 'commit', '--quiet', '-m', 'Initial commit');
  return dir;
}

/** Pids of live processes whose command line mentions `needle` (an agent's install directory). */
export function processesMentioning(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(needle)) found.push(Number(entry));
    } catch {
      // it ended while we looked
    }
  }
  return found;
}
