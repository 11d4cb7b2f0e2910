// Issue 25, exactly once: PostgreSQL (a private cluster of this test's own, never the machine's) is stopped
// and started while directives wait in a thread's queue, queued through two instances of the service on that
// database. The first item's agent crashes, so the next item's turn starts a new agent process (about a
// second) and the database goes away just then: after the hand-over committed, before the prompt was taken.
// After the restart every item runs exactly once, in order: one `dequeued` each, one run each, its prompt
// recorded once (taken once) in that run, nothing left running or waiting, and the item the outage met runs.
//
// What breaks it: the code before the unsent prompt (the turn met the outage before the agent had the
// prompt, the run failed, then the sweep failed it `turn_lease_expired`: that item never ran, seen here as
// ['agent_failed', 'turn_lease_expired', 'succeeded', ...]); a queue kept in each instance (the items queued
// through the instance that does not hand the turn over never run); a hand-over that is not one write (an
// outage between the release and the next start leaves the queue idle, or two instances start one item).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { faultDatabaseUnavailable, openFaultDatabase, startInstance, type FaultDatabase } from '../support/fault-cluster.ts';
import type { TestService } from '../support/service.ts';

const SKIP = faultDatabaseUnavailable(true);
if (SKIP !== null) console.log(`# PostgreSQL restart fault test (queue) skipped: ${SKIP}`);

/** A short lease, so turns cut by the outage are swept soon after it. */
const LEASE_MS = 2_000;
const THREADS = 1;
const ITEMS = 4;
/** The first item's agent crashes: the next item's turn starts a new agent process, and the database goes away meanwhile. */
const text = (i: number) => (i === 0 ? '[crash] item 0' : `item ${i}`);
const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

/** Polls the database (on a connection of its own) until `ready`, ignoring the errors of an outage; fails after `ms`. */
async function until<T>(database: FaultDatabase, what: string, sql: string, ready: (rows: T[]) => boolean, ms: number): Promise<T[]> {
  const end = Date.now() + ms;
  let last: T[] = [];
  for (;;) {
    last = ((await database.execute(sql).catch(() => null)) as T[] | null) ?? last;
    if (ready(last)) return last;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}; last: ${JSON.stringify(last)}`);
    await sleep(20);
  }
}

describe('fault: PostgreSQL stopped and started while directives wait in a queue, two instances', { skip: SKIP ?? false }, () => {
  it('every queued item runs exactly once, in order: none lost, none doubled', { timeout: 240_000 }, async (t) => {
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const cluster = database.cluster!;
    const env = { TURN_LEASE_MS: String(LEASE_MS), DIRECTIVES_PER_MINUTE: '100000' };
    const backoff = { backoff: { minMs: 100, maxMs: 1_000 } };
    const a = await startInstance(database, env, backoff);
    undo.push(() => a.close());
    const b = await startInstance(database, env, backoff);
    undo.push(() => b.close());
    // The database is up again before the services close (a failed test may leave it stopped).
    undo.push(() => cluster.start().catch(() => {}));
    const post = (service: TestService, path: string, body: unknown) =>
      service.ask({ method: 'POST', path: `/api/console/threads/${path}`, headers: ALICE, body: JSON.stringify(body) });

    // Each thread holds a turn with items queued behind it, through both instances alternately (the queue is the
    // database's, not an instance's). Several threads, so that the outage lands in some hand-over or turn start.
    const threads: { id: string; queued: string[] }[] = [];
    for (let n = 0; n < THREADS; n++) {
      const held = await post(n % 2 === 0 ? a : b, `${randomUUID()}/directives`, { text: 'hold [wait]', model: 'claude:opus' });
      assert.equal(held.status, 202, held.text);
      threads.push({ id: held.json().thread_id as string, queued: [] });
    }
    const ids = threads.map((thread) => `'${thread.id}'`).join(', ');
    await until(database, 'the held runs to start', `select thread_id from events where thread_id in (${ids}) and type = 'run_started'`,
      (rows) => rows.length === THREADS, 30_000);
    for (const thread of threads) {
      for (let i = 0; i < ITEMS; i++) {
        const res = await post(i % 2 === 0 ? a : b, `${thread.id}/directives`, { text: text(i), when_busy: 'queue' });
        assert.equal(res.status, 202, res.text);
        thread.queued.push(res.json().queued.id);
      }
    }
    // The held turns end, and the queues start to run through; the database goes away as the first items start.
    for (const [n, thread] of threads.entries()) assert.equal((await post(n % 2 === 0 ? b : a, `${thread.id}/cancel`, {})).status, 202);
    await until(database, 'the second items to start', `select thread_id from events where thread_id in (${ids}) and type = 'dequeued'`,
      (rows) => rows.length >= 2 * THREADS, 30_000);
    await cluster.stop();
    await sleep(3_000);
    await cluster.start();
    const restarted = Date.now();

    // Every item started, and nothing runs any more (swept turns included).
    const settled = `select (select count(*)::int from events where thread_id in (${ids}) and type = 'dequeued') as dequeued,
      (select count(*)::int from runs r join conversations c on c.id = r.conversation_id where c.thread_id in (${ids}) and r.status = 'running') as running,
      (select count(*)::int from conversations where thread_id in (${ids}) and turn_running) as turns,
      (select count(*)::int from directive_queue where thread_id in (${ids})) as waiting`;
    await until<{ dequeued: number; running: number; turns: number; waiting: number }>(database, 'every item to run to its end', settled,
      ([row]) => row !== undefined && row.dequeued === THREADS * ITEMS && row.running === 0 && row.turns === 0 && row.waiting === 0, LEASE_MS * 15 + 30_000);
    t.diagnostic(`settled ${Date.now() - restarted} ms after the restart`);

    for (const [n, { id, queued }] of threads.entries()) {
      const dequeued = (await database.execute(`select data from events where thread_id = '${id}' and type = 'dequeued' order by seq`)) as { data: { id: string; run_id: string } }[];
      assert.deepEqual(dequeued.map((row) => row.data.id), queued, `thread ${n}: each item left the queue once, in order`);
      const runs = (await database.execute(`select r.id, r.status, r.error from runs r join conversations c on c.id = r.conversation_id
        where c.thread_id = '${id}' order by r.id`)) as { id: string; status: string; error: string | null }[];
      assert.equal(runs.length, 1 + ITEMS, `thread ${n}: one run for the held turn and one per item: ${JSON.stringify(runs)}`);
      assert.deepEqual(runs.slice(1).map((run) => run.id), dequeued.map((row) => row.data.run_id), `thread ${n}: the items' runs, in queue order`);
      const prompts = (await database.execute(`select run_id, content from model_messages where role = 'user'
        and run_id in (${runs.map((run) => `'${run.id}'`).join(', ')}) order by run_id, id`)) as { run_id: string; content: string }[];
      assert.deepEqual(prompts.map((row) => [row.run_id, row.content]), [[runs[0]!.id, 'hold [wait]'], ...queued.map((_, i) => [runs[i + 1]!.id, text(i)])],
        `thread ${n}: every item's prompt taken once, in its own run (runs: ${JSON.stringify(runs)})`);
      t.diagnostic(`thread ${n}: ${runs.map((run) => (run.error ?? run.status).split(':')[0]).join(', ')}`);
      // The crashed item failed (its agent had it); the one the outage met before its agent had its prompt was
      // started again once the database was back, not failed (turn_lease_expired: lost); the rest ran.
      assert.deepEqual(runs.slice(1).map((run) => (run.error ?? run.status).split(':')[0]), ['agent_failed', ...queued.slice(1).map(() => 'succeeded')]);
    }
  });
});
