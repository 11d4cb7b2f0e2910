import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { ask } from '../support/http.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { createScratchDatabase } from '../support/scratch-database.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const LEASE_MS = 1500;

/** The service as `npm start` runs it, in a process of its own, with the port it logs. */
async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', TURN_LEASE_MS: String(LEASE_MS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
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

const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;

/**
 * kill -9 of the service mid-run, then a restart on the same storage: the run that was running is
 * swept within the lease (`failed`, `turn_lease_expired`, then `run_error` and `reflex_asleep`), and
 * the thread takes a directive again. Before leases it stayed `running` and 409 forever.
 */
function killAndRestart(name: string, storageEnv: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>) {
  it(`${name}: the thread works again within the lease after kill -9 mid-run`, { timeout: 90_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    const first = await startService(env);
    const key = randomUUID();
    let socket = (await connectLive(first.port, { thread: key, after: '0' })) as LiveClient;
    const res = await ask(first.port, { method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Take your time [wait]', model: 'claude:opus', project: 'acme-web' }) });
    assert.equal(res.status, 202, res.text);
    const { thread_id: threadId, conversation_id: conversationId, run_id: runId } = res.json();
    await socket.until((events) => events.some((e) => e.type === 'run_started'));
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    socket.close();

    const second = await startService(env);
    t.after(async () => {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    });
    const started = Date.now();
    socket = (await connectLive(second.port, { thread: threadId, after: '0' })) as LiveClient;
    const events = await socket.until(asleep(1), LEASE_MS * 6);
    const sweptAfter = Date.now() - started;
    const tail = events.filter((e) => e.data.run_id === runId).map((e) => e.type);
    assert.deepEqual(tail.slice(-2), ['run_error', 'reflex_asleep']);
    assert.ok(sweptAfter < LEASE_MS * 4, `swept after ${sweptAfter} ms`);
    const runs = (await ask(second.port, { path: `/api/console/threads/${threadId}/conversations/${conversationId}/runs`, headers: ALICE })).json();
    assert.equal(runs.items[0].status, 'failed');
    assert.match(runs.items[0].error, /^turn_lease_expired: /);
    const again = await ask(second.port, { method: 'POST', path: `/api/console/threads/${threadId}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Once more' }) });
    assert.equal(again.status, 202, again.text);
    const done = await socket.until(asleep(2));
    assert.equal(done.at(-2)!.type, 'run_finished');
    assert.deepEqual(done.map((e) => e.seq), done.map((_, i) => i + 1), 'no event lost or doubled');
    socket.close();
  });
}

describe('kill -9 mid-run, then a restart', () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const worldFile = (): string => {
    const dir = mkdtempSync(join(tmpdir(), 'console-fault-'));
    dirs.push(dir);
    const file = join(dir, 'world.json');
    // A world file names tokens; the fixture holds their hashes.
    const users = [{ id: 'alice', name: 'Alice', token: 'token-alice' }, { id: 'bob', name: 'Bob', token: 'token-bob' }];
    writeFileSync(file, JSON.stringify({ ...fixtureWorld(), users }));
    return file;
  };

  killAndRestart('embedded', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-fault-data-'));
    dirs.push(dataDir);
    return { env: { CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir, CONSOLE_WORLD: worldFile() }, cleanup: async () => {} };
  });

  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined) {
    it.skip('postgres: TEST_DATABASE_URL is not set');
  } else {
    killAndRestart('postgres', async () => {
      const scratch = await createScratchDatabase(url);
      const dataDir = mkdtempSync(join(tmpdir(), 'console-fault-data-'));
      dirs.push(dataDir);
      return {
        env: { CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url, DATA_DIR: dataDir, CONSOLE_WORLD: worldFile() },
        cleanup: () => scratch.drop(),
      };
    });
  }
});
