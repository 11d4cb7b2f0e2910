// Issue 25: follow-ups queued while a turn runs must survive the instance. kill -9 of a real service process
// while three directives wait behind a held turn, then a restart on the same storage: the held turn is swept,
// and the three run, in order, once each (a queue kept in the process would have lost them).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { ask } from '../support/http.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { FAULT_LEASE_MS, forEachFaultStorage, startServiceProcess, type FaultStorage } from '../support/fault-service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const FOLLOW_UPS = ['one', 'two', 'three'];


const ofType = (events: readonly WireEvent[], type: string) => events.filter((e) => e.type === type);

function killWithQueue(name: string, storageEnv: FaultStorage) {
  it(`${name}: directives queued behind a turn run once each, in order, after kill -9 and a restart`, { timeout: 180_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    const first = await startServiceProcess(env);
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

    const second = await startServiceProcess(env);
    t.after(async () => {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    });
    socket = (await connectLive(second.port, { thread: threadId, after: '0' })) as LiveClient;
    // The held turn swept, then the three follow-ups, each to its end.
    const events = await socket.until((e) => ofType(e, 'reflex_asleep').length === 1 + FOLLOW_UPS.length, FAULT_LEASE_MS * 20);
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
  forEachFaultStorage(killWithQueue);
});
