import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { loadWorldFile } from '../src/world/load.ts';
import { DEMO_WORLD } from '../src/open-storage.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { startService } from './support/service.ts';
import { serviceEntry } from './support/built.ts';

interface Started {
  child: ChildProcess;
  port: number;
  logs: Record<string, unknown>[];
}

/** Runs `src/main.ts` as `npm start` does, with its own env, until it listens (or exits). */
async function startMain(env: Record<string, string>): Promise<Started | { exitCode: number; stderr: string }> {
  const child = spawn(process.execPath, [serviceEntry()], {
    env: { ...process.env, PORT: '0', ARTIFACT_SANDBOX_ORIGIN: 'http://sandbox.localhost:1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk) => (stderr += chunk));
  const logs: Record<string, unknown>[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    const entry = JSON.parse(line);
    logs.push(entry);
    if (entry.msg === 'console service listening') return { child, port: Number(new URL(entry.url).port), logs };
  }
  const [exitCode] = child.exitCode === null ? await once(child, 'exit') : [child.exitCode];
  return { exitCode: exitCode as number, stderr: stderr + JSON.stringify(logs) };
}

const stop = async (started: Started) => {
  const exited = once(started.child, 'exit');
  started.child.kill('SIGTERM');
  assert.deepEqual((await exited)[0], 0);
};

const threadIds = async (port: number): Promise<string[]> => {
  const res = await fetch(`http://127.0.0.1:${port}/api/console/threads?limit=200`, { headers: { authorization: 'Bearer dev-alice' } });
  assert.equal(res.status, 200);
  return ((await res.json()) as { items: { id: string }[] }).items.map((t) => t.id);
};

describe('npm start on the embedded database', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'console-data-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('imports the demo world on first start, keeps what was written across a restart, and locks its data dir', { timeout: 120_000 }, async () => {
    const first = await startMain({ DATA_DIR: dataDir });
    assert.ok('child' in first, `first start failed: ${'stderr' in first ? first.stderr : ''}`);
    assert.ok(first.logs.some((l) => l.msg === 'world imported'));
    // The world's agents start while the database opens (initdb, on a first start), not once it is open.
    const at = (msg: string) => first.logs.find((l) => l.msg === msg)?.time as number;
    assert.ok(at('agent process started') < at('world imported'), 'an agent of the world was started before the world was imported');
    const demo = await threadIds(first.port);
    assert.ok(demo.length >= 3);

    const second = await startMain({ DATA_DIR: dataDir });
    assert.ok('exitCode' in second, 'a second process on the same data dir must not start');
    assert.notEqual(second.exitCode, 0);
    assert.match(second.stderr, /lock/i);
    await stop(first);

    // Something written between the runs: a world with one more thread for alice.
    const server = await startEmbeddedPostgres({ dataDir });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    const loaded = await loadWorldFile(DEMO_WORLD);
    assert.ok(loaded.ok);
    const extra = fixtureWorld().threads.find((t) => t.title === 'Shared with alice')!;
    await storage.importWorld({ ...loaded.value, users: [...loaded.value.users, fixtureWorld().users[1]!].filter((u, i, all) => all.findIndex((x) => x.id === u.id) === i), threads: [{ ...extra, owner: 'alice', members: [] }] });
    await storage.close();
    await server.close();

    const again = await startMain({ DATA_DIR: dataDir });
    assert.ok('child' in again);
    assert.ok(!again.logs.some((l) => l.msg === 'world imported'), 'the demo world is imported on the first start only');
    assert.deepEqual((await threadIds(again.port)).sort(), [...demo, extra.id].sort());
    await stop(again);
  });

  it('a world file that does not validate stops the start with status 2 and names the path', { timeout: 60_000 }, async () => {
    const bad = join(dataDir, 'bad-world.json');
    (await import('node:fs')).writeFileSync(bad, JSON.stringify({ users: [{ id: 'a', name: 'A', token: 'short' }], agents: [], channels: [] }));
    const started = await startMain({ CONSOLE_STORAGE: 'memory', CONSOLE_WORLD: bad });
    assert.ok('exitCode' in started);
    assert.equal(started.exitCode, 2);
    assert.match(started.stderr, /users\.0\.token/);
  });
});

describe('storage that goes away', () => {
  it('answers 503 on reads and readiness, not 500', { timeout: 60_000 }, async () => {
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
    const service = await startService({}, { storage });
    try {
      const headers = { authorization: 'Bearer token-alice' };
      assert.equal((await service.ask({ path: '/api/console/threads', headers })).status, 200);
      await server.close();
      const down = await service.ask({ path: '/api/console/threads', headers });
      assert.equal(down.status, 503);
      assert.equal(down.json().detail, 'Storage is unavailable');
      assert.equal((await service.ask({ path: '/readyz' })).status, 503);
    } finally {
      await service.close();
    }
  });
});
