import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const LIMIT_MS = 60_000;

/** Milliseconds from spawning `npm start` to its listening log line, and to `/readyz` answering 200. */
export interface StartTimes {
  readonly listening: number;
  readonly ready: number;
}

/** Milliseconds from spawning `npm start` (embedded, on `dataDir`) to `/readyz` answering 200; the group is stopped after. */
async function startToReady(dataDir: string): Promise<number> {
  return (await startTimes(dataDir)).ready;
}

/** One `npm start` (embedded, on `dataDir`) timed to listening and to ready; the group is stopped after. */
export async function startTimes(dataDir: string): Promise<StartTimes> {
  const started = performance.now();
  const child = spawn('npm', ['start'], {
    detached: true,
    env: { ...process.env, PORT: '0', CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir, ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const exited = once(child, 'exit');
  const killer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), LIMIT_MS);
  try {
    let port: number | undefined;
    let listening = 0;
    for await (const line of createInterface({ input: child.stdout! })) {
      if (!line.startsWith('{')) continue;
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'console service listening') {
        port = Number(new URL(entry.url!).port);
        listening = performance.now() - started;
        break;
      }
    }
    if (port === undefined) throw new Error('npm start never listened');
    child.stdout!.resume();
    for (;;) {
      const status = await fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status, () => 0);
      if (status === 200) return { listening, ready: performance.now() - started };
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    // SIGTERM: the service drains and closes PGlite, flushing the data dir and releasing its lock.
    process.kill(-child.pid!, 'SIGTERM');
    await exited;
    clearTimeout(killer);
  }
}

/**
 * Milliseconds from spawning a bare node process to PGlite open on `dataDir` and answering `select 1`.
 * A timer keeps the event loop awake meanwhile, as the service's database thread does: a loop that runs
 * out of work has Node wait for V8's background tasks (PGlite's WebAssembly tier-up), about 200 ms here.
 * `settings` are PostgreSQL settings given as start parameters after PGlite's own, as the service gives its
 * own (EMBEDDED_SETTINGS); none, PGlite's defaults (the floor issue 41 names).
 */
export async function pgliteReopen(dataDir: string, settings: Readonly<Record<string, string>> = {}): Promise<number> {
  const started = performance.now();
  const params = Object.entries(settings).flatMap(([name, value]) => ['-c', `${name}=${value}`]);
  const options = params.length === 0 ? '' : `, { startParams: [...PGlite.defaultStartParams, ...${JSON.stringify(params)}] }`;
  const script = `import { PGlite } from '@electric-sql/pglite';
const awake = setInterval(() => {}, 60000);
const db = await PGlite.create(${JSON.stringify(dataDir)}${options}); await db.query('select 1'); process.stdout.write('open\\n'); clearInterval(awake); await db.close();`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: new URL('..', import.meta.url).pathname, stdio: ['ignore', 'pipe', 'inherit'] });
  let opened = 0;
  child.stdout.on('data', () => (opened ||= performance.now() - started));
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0 || opened === 0) throw new Error(`PGlite reopen exited with ${code}`);
  return opened;
}

/**
 * Milliseconds npm itself takes to start a script, measured as `npm run env`: npm's CLI loaded and the package read,
 * its built-in `env` script run (it prints the environment, no child process). Issue 41's floor of a start is this
 * plus {@link pgliteReopen}: what any `npm start` of a service on this data dir must wait for.
 */
export async function npmOwnStart(): Promise<number> {
  const started = performance.now();
  const child = spawn('npm', ['run', '--silent', 'env'], { cwd: new URL('..', import.meta.url).pathname, stdio: ['ignore', 'ignore', 'inherit'] });
  const [code] = (await once(child, 'exit')) as [number];
  if (code !== 0) throw new Error(`npm run env exited with ${code}`);
  return performance.now() - started;
}

export interface ColdStart {
  readonly first: number;
  readonly second: number;
  readonly pgliteReopen: number;
}

/** The first start (initdb, migrations, world) and the second (reopen) on one fresh embedded data dir. */
export async function coldStart(): Promise<ColdStart> {
  const parent = mkdtempSync(join(tmpdir(), 'console-bench-start-'));
  const dataDir = join(parent, 'data');
  try {
    const first = await startToReady(dataDir);
    const second = await startToReady(dataDir);
    // The service's DATA_DIR is PGlite's own directory: the same files, opened alone.
    const reopen = await pgliteReopen(dataDir);
    return { first, second, pgliteReopen: reopen };
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
}
