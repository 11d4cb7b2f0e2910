import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, it } from 'node:test';
import { fixtureWorld } from './fixture-world.ts';
import { createScratchDatabase } from './scratch-database.ts';
import { serviceEntry } from './built.ts';

/** The turn lease of the fault tests' services: short, so a killed holder's turn is swept within a test. */
export const FAULT_LEASE_MS = 1500;

/**
 * The service as `npm start` runs it, in a process of its own, with the port it logs. The start is given
 * 60 s: an embedded start (PGlite) on a loaded 2-core machine took more than 30 s in the full suite.
 */
export async function startServiceProcess(env: Record<string, string>, prefix: readonly string[] = []): Promise<{ child: ChildProcess; port: number }> {
  // `prefix`: a command the service runs under (`unshare -m …`), its last argument followed by node and the entry.
  const argv = [...prefix, process.execPath, serviceEntry()];
  const child = spawn(argv[0]!, argv.slice(1), {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', TURN_LEASE_MS: String(FAULT_LEASE_MS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  try {
    for await (const line of createInterface({ input: child.stdout! })) {
      const entry = JSON.parse(line) as { msg?: string; url?: string };
      if (entry.msg === 'console service listening') {
        child.stdout!.resume();
        return { child, port: Number(new URL(entry.url!).port) };
      }
    }
  } finally {
    clearTimeout(timer);
  }
  throw new Error(`the service never listened (exit ${child.exitCode})`);
}

/** A storage for one fault test: the environment that selects it, and what drops it afterwards. */
export type FaultStorage = () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>;

/**
 * Calls `test` once per storage a process can restart on: embedded PGlite in a data directory of its own,
 * and PostgreSQL in a scratch database when TEST_DATABASE_URL is set (a named skip otherwise). Each holds
 * the fixture world, from a world file, with `projects` added; what is made is removed after the suite.
 */
export function forEachFaultStorage(test: (name: string, storage: FaultStorage) => void, options: { readonly projects?: readonly unknown[] } = {}): void {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const tempDir = (prefix: string): string => {
    const dir = mkdtempSync(join(tmpdir(), prefix));
    dirs.push(dir);
    return dir;
  };
  const worldFile = (): string => {
    const file = join(tempDir('console-fault-'), 'world.json');
    // A world file names tokens; the fixture holds their hashes.
    const users = [{ id: 'alice', name: 'Alice', token: 'token-alice' }, { id: 'bob', name: 'Bob', token: 'token-bob' }];
    const world = fixtureWorld();
    writeFileSync(file, JSON.stringify({ ...world, users, projects: [...world.projects, ...(options.projects ?? [])] }));
    return file;
  };
  test('embedded', async () => ({
    env: { CONSOLE_STORAGE: 'embedded', DATA_DIR: tempDir('console-fault-data-'), CONSOLE_WORLD: worldFile() },
    cleanup: async () => {},
  }));
  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined) {
    it.skip('postgres: TEST_DATABASE_URL is not set');
    return;
  }
  test('postgres', async () => {
    const scratch = await createScratchDatabase(url);
    return {
      env: { CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, DATA_DIR: tempDir('console-fault-data-'), CONSOLE_WORLD: worldFile() },
      cleanup: () => scratch.drop(),
    };
  });
}

type ServiceProcess = Awaited<ReturnType<typeof startServiceProcess>>;

/** Stops a service process with SIGTERM, unless it has exited already; waits for its exit. */
export async function stopServiceProcess(service: ServiceProcess): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  await once(service.child, 'exit');
}

export { idleThread } from './http.ts';
