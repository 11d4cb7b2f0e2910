import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { writeFileSync, mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { MikroORM } from '@mikro-orm/postgresql';
import { serviceEntry } from './support/built.ts';

/** Runs `src/main.ts` as `npm start` does until it exits; a start that listens is a failure here. */
async function failedStart(env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const child = spawn(process.execPath, [serviceEntry()], {
    env: {
      ...process.env,
      PORT: '0',
      CONSOLE_STORAGE: 'memory',
      DATA_DIR: mkdtempSync(join(tmpdir(), 'console-start-')),
      ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  child.stdout!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const [status] = await once(child, 'exit');
  clearTimeout(timer);
  return { status: status as number | null, stderr };
}

/** Status 2, and exactly one line on stderr, matching `cause`, with no stack frame. */
function assertOneLine(run: { status: number | null; stderr: string }, cause: RegExp): void {
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('npm warn'));
  assert.equal(run.status, 2, run.stderr);
  assert.equal(lines.length, 1, `one line expected, got:\n${run.stderr}`);
  assert.match(lines[0]!, cause);
  assert.doesNotMatch(run.stderr, /^\s+at /m);
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('start-up failures: status 2 and one line naming the cause', () => {
  it('a port in use', { timeout: 40_000 }, async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      assertOneLine(await failedStart({ PORT: String(port) }), new RegExp(`127\\.0\\.0\\.1:${port}.*in use`));
    } finally {
      taken.close();
    }
  });

  it('a HOST that does not resolve', { timeout: 40_000 }, async () => {
    assertOneLine(await failedStart({ HOST: 'not-a-host.invalid' }), /HOST not-a-host\.invalid does not resolve/);
  });

  it('a HOST that is not an address of this machine', { timeout: 40_000 }, async () => {
    // TEST-NET-1 (RFC 5737): never assigned to a local interface.
    assertOneLine(await failedStart({ HOST: '192.0.2.1' }), /HOST 192\.0\.2\.1 is not an address of this machine/);
  });

  it('an unreachable database', { timeout: 40_000 }, async () => {
    const port = await closedPort();
    assertOneLine(
      await failedStart({ CONSOLE_STORAGE: 'postgres', DATABASE_URL: `postgres://console:secret-pw@127.0.0.1:${port}/console` }),
      new RegExp(`Cannot reach the database server at 127\\.0\\.0\\.1:${port}: connection refused`),
    );
  });

  it('a world file that does not validate', { timeout: 40_000 }, async () => {
    const bad = join(mkdtempSync(join(tmpdir(), 'console-world-')), 'world.json');
    writeFileSync(bad, JSON.stringify({ users: [{ id: 'a', name: 'A', token: 'short' }], agents: [], channels: [] }));
    assertOneLine(await failedStart({ CONSOLE_WORLD: bad }), /^Invalid world file: .*users\.0\.token/);
  });

  it('a world file that does not exist', { timeout: 40_000 }, async () => {
    assertOneLine(await failedStart({ CONSOLE_WORLD: '/nonexistent/world.json' }), /world/i);
  });

  const url = process.env.TEST_DATABASE_URL;
  it('a DATABASE_URL naming a database that does not exist: refused, never created', { timeout: 40_000, skip: url ? false : 'TEST_DATABASE_URL is not set' }, async () => {
    const name = `console_missing_${Date.now().toString(36)}`;
    const missing = new URL(url!);
    missing.pathname = `/${name}`;
    const run = await failedStart({ CONSOLE_STORAGE: 'postgres', DATABASE_URL: missing.toString() });
    const maintenance = await MikroORM.init({ clientUrl: url!, entities: [], discovery: { warnWhenNoEntities: false }, ensureDatabase: false, pool: { min: 0, max: 1 } });
    try {
      const rows = await maintenance.em.getConnection().execute('select 1 from pg_database where datname = ?', [name]);
      if (rows.length > 0) await maintenance.em.getConnection().execute(`drop database "${name}"`);
      assert.equal(rows.length, 0, 'the service created the database');
    } finally {
      await maintenance.close(true);
    }
    assertOneLine(run, new RegExp(`The database "${name}" does not exist`));
  });
});
