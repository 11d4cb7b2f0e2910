import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** One HTTP request a load run repeats: a loopback URL and the headers it carries (Host among them). */
export interface Target {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

/** How load is made: wrk when the machine has it, else autocannon (its CLI, in a process of its own). */
export interface LoadTool {
  readonly name: string;
  /** The command line of one run, as the section shows it. */
  readonly describe: (connections: number, seconds: number) => string;
  /** Requests per second over one run; throws when any answer was not 2xx or a socket failed. */
  readonly run: (target: Target, connections: number, seconds: number) => Promise<number>;
}

const AUTOCANNON_VERSION = '8';

function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function output(command: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    // Bounded: a load run that does not end is killed, and the bench fails rather than hangs.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} exited with ${code}: ${err.trim().slice(-500)}`));
    });
  });
}

function wrk(): LoadTool {
  return {
    name: 'wrk',
    describe: (c, s) => `wrk -t1 -c${c} -d${s}s -H 'Host: …' <url>`,
    run: async (target, connections, seconds) => {
      // wrk adds a Host of its own unless one named exactly `Host` is given, and two are a 400.
      const headers = Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k.toLowerCase() === 'host' ? 'Host' : k}: ${v}`]);
      const text = await output('wrk', ['-t1', `-c${connections}`, `-d${seconds}s`, ...headers, target.url], (seconds + 10) * 1000);
      if (/Non-2xx or 3xx responses|Socket errors/.test(text)) throw new Error(`wrk saw failures on ${target.url}:\n${text}`);
      const rate = /Requests\/sec:\s+([\d.]+)/.exec(text);
      if (rate === null) throw new Error(`no rate in wrk's output:\n${text}`);
      return Number(rate[1]);
    },
  };
}

/** autocannon in a cache directory under the system's temporary directory; installed there once, never in package.json. */
async function autocannon(): Promise<LoadTool> {
  const cache = join(tmpdir(), `console-bench-autocannon-${AUTOCANNON_VERSION}`);
  const cli = join(cache, 'node_modules', 'autocannon', 'autocannon.js');
  if (!existsSync(cli)) {
    mkdirSync(cache, { recursive: true });
    console.log(`installing autocannon@${AUTOCANNON_VERSION} into ${cache}`);
    await output('npm', ['install', '--prefix', cache, '--no-audit', '--no-fund', `autocannon@${AUTOCANNON_VERSION}`], 180_000);
  }
  return {
    name: `autocannon@${AUTOCANNON_VERSION}`,
    describe: (c, s) => `autocannon -c ${c} -d ${s} -H host=… <url>`,
    run: async (target, connections, seconds) => {
      const headers = Object.entries(target.headers).flatMap(([k, v]) => ['-H', `${k}=${v}`]);
      const text = await output(process.execPath, [cli, '--json', '-c', String(connections), '-d', String(seconds), ...headers, target.url], (seconds + 20) * 1000);
      const result = JSON.parse(text) as { non2xx: number; errors: number; timeouts: number; duration: number; '2xx': number };
      if (result.non2xx !== 0 || result.errors !== 0 || result.timeouts !== 0) {
        throw new Error(`autocannon saw failures on ${target.url}: ${result.non2xx} non-2xx, ${result.errors} errors, ${result.timeouts} time-outs`);
      }
      return result['2xx'] / result.duration;
    },
  };
}

/** wrk if `command -v wrk` finds it, else autocannon (installed into the cache when missing). */
export async function loadTool(): Promise<LoadTool> {
  return onPath('wrk') ? wrk() : autocannon();
}

/** Each side's rate per round, measured A B A B … after one short untimed warm-up of each. */
export interface SideBySide {
  readonly project: number[];
  readonly bare: number[];
}

/** Loads the project and its bare baseline in turn, `rounds` times each, so drift hits both alike. */
export async function sideBySide(tool: LoadTool, project: Target, bare: Target, options: { rounds: number; seconds: number; connections: number }): Promise<SideBySide> {
  await tool.run(project, options.connections, 1);
  await tool.run(bare, options.connections, 1);
  const result: SideBySide = { project: [], bare: [] };
  for (let round = 0; round < options.rounds; round++) {
    result.project.push(await tool.run(project, options.connections, options.seconds));
    result.bare.push(await tool.run(bare, options.connections, options.seconds));
  }
  return result;
}

/** The mean of the rounds. */
export const mean = (values: readonly number[]): number => values.reduce((sum, v) => sum + v, 0) / values.length;
