import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { ask } from '../support/http.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { FAULT_LEASE_MS, forEachFaultStorage, startServiceProcess, type FaultStorage } from '../support/fault-service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };


const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;

/**
 * kill -9 of the service mid-run, then a restart on the same storage: the run that was running is
 * swept within the lease (`failed`, `turn_lease_expired`, then `run_error` and `reflex_asleep`), and
 * the thread takes a directive again. Before leases it stayed `running` and 409 forever.
 */
function killAndRestart(name: string, storageEnv: FaultStorage) {
  it(`${name}: the thread works again within the lease after kill -9 mid-run`, { timeout: 90_000 }, async (t) => {
    const { env, cleanup } = await storageEnv();
    t.after(cleanup);
    const first = await startServiceProcess(env);
    const key = randomUUID();
    let socket = (await connectLive(first.port, { thread: key, after: '0' })) as LiveClient;
    const res = await ask(first.port, { method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Take your time [wait]', model: 'claude:opus', project: 'acme-web' }) });
    assert.equal(res.status, 202, res.text);
    const { thread_id: threadId, conversation_id: conversationId, run_id: runId } = res.json();
    await socket.until((events) => events.some((e) => e.type === 'run_started'));
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    socket.close();

    const second = await startServiceProcess(env);
    t.after(async () => {
      second.child.kill('SIGTERM');
      await once(second.child, 'exit');
    });
    const started = Date.now();
    socket = (await connectLive(second.port, { thread: threadId, after: '0' })) as LiveClient;
    const events = await socket.until(asleep(1), FAULT_LEASE_MS * 6);
    const sweptAfter = Date.now() - started;
    const tail = events.filter((e) => e.data.run_id === runId).map((e) => e.type);
    assert.deepEqual(tail.slice(-2), ['run_error', 'reflex_asleep']);
    assert.ok(sweptAfter < FAULT_LEASE_MS * 4, `swept after ${sweptAfter} ms`);
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
  forEachFaultStorage(killAndRestart);
});
