// Issue 25: follow-ups queued while a turn runs must survive the instance. kill -9 of a real service process
// while three directives wait behind a held turn, then a restart on the same storage: the held turn is swept,
// and the three run, in order, once each (a queue kept in the process would have lost them).
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
const FOLLOW_UPS = ['one', 'two', 'three'];

/** The service as `npm start` runs it, in a process of its own, with the port it logs. */
async function startService(env: Record<string, string>): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', TURN_LEASE_MS: String(LEASE_MS), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stderr!.resume();
  // Generous: an embedded start (PGlite) on a loaded 2-core machine took more than 30 s in the full suite.
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

const ofType = (events: readonly WireEvent[], type: string) => events.filter((e) => e.type === type);

function killWithQueue(name: string, storageEnv: () => Promise<{ env: Record<string, string>; cleanup: () => Promise<void> }>) {
  it(`${name}: directives queued behind a turn run once each, in order, after kill -9 and a restart`, { timeout: 180_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    const first = await startService(env);
    const key = randomUUID();
    let socket = (await connectLive(first.port, { thread: key, after: '0' })) as LiveClient;
    const held = await ask(first.port, { method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Hold on [wait]', model: 'claude:opus' }) });
    assert.equal(held.status, 202, held.text);
    const { thread_id: threadId, conversation_id: conversationId } = held.json();
    await socket.until((events) => ofType(events, 'run_started').length === 1);
    const queued: string[] = [];
    for (const text of FOLLOW_UPS) {
      const res = await ask(first.port, { method: 'POST', path: `/api/console/threads/${threadId}/directives`, headers: ALICE, body: JSON.stringify({ text, when_busy: 'queue' }) });
      assert.equal(res.status, 202, res.text);
      queued.push(res.json().queued.id);
    }
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    socket.close();

    const second = await startService(env);
    t.after(async () => {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    });
    socket = (await connectLive(second.port, { thread: threadId, after: '0' })) as LiveClient;
    // The held turn swept, then the three follow-ups, each to its end.
    const events = await socket.until((e) => ofType(e, 'reflex_asleep').length === 1 + FOLLOW_UPS.length, LEASE_MS * 20);
    socket.close();
    assert.deepEqual(ofType(events, 'dequeued').map((e) => e.data.id), queued, 'each left the queue once, in order');
    const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
    assert.equal(new Set(runs).size, 1 + FOLLOW_UPS.length);
    const prompts = [];
    for (const run of runs.slice(1)) {
      const page = (await ask(second.port, { path: `/api/console/threads/${threadId}/runs/${run}/messages`, headers: ALICE })).json();
      prompts.push((page.items as { role: string; content: string }[]).find((m) => m.role === 'user')?.content);
    }
    assert.deepEqual(prompts, FOLLOW_UPS);
    const listed = (await ask(second.port, { path: `/api/console/threads/${threadId}/conversations/${conversationId}/runs`, headers: ALICE })).json();
    assert.equal(listed.items.length, 1 + FOLLOW_UPS.length, 'no run doubled');
    assert.deepEqual((await ask(second.port, { path: `/api/console/threads/${threadId}/queue`, headers: ALICE })).json(), []);
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'no event lost or doubled');
  });
}

describe('kill -9 with directives queued, then a restart', () => {
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

  killWithQueue('embedded', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'console-fault-data-'));
    dirs.push(dataDir);
    return { env: { CONSOLE_STORAGE: 'embedded', DATA_DIR: dataDir, CONSOLE_WORLD: worldFile() }, cleanup: async () => {} };
  });

  const url = process.env.TEST_DATABASE_URL;
  if (url === undefined) {
    it.skip('postgres: TEST_DATABASE_URL is not set');
  } else {
    killWithQueue('postgres', async () => {
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
