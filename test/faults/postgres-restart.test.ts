import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { faultDatabaseUnavailable, openFaultDatabase, startInstance } from '../support/fault-cluster.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import type { TestService } from '../support/service.ts';

const SKIP = faultDatabaseUnavailable(true);
if (SKIP !== null) console.log(`# PostgreSQL restart fault test skipped: ${SKIP}`);

/** A short lease, so a turn whose run could not be finished while the database was down is swept soon. */
const LEASE_MS = 2_000;
const THREADS = 4;

/**
 * A client as a console keeps one: a live socket that, whenever it is closed (the service answers
 * 1011 or 503 while its storage is down), connects again with `after` the last seq it has. Its
 * events across every connection are kept in the order they came.
 */
class Follower {
  readonly events: WireEvent[] = [];
  connections = 0;
  #current: LiveClient | null = null;
  #stopped = false;
  readonly #done: Promise<void>;

  constructor(private readonly service: TestService, private ref: string) {
    this.#done = this.#follow();
  }

  /** Resolves once `ready` holds for the events so far; rejects after `ms`. */
  async until(ready: (events: readonly WireEvent[]) => boolean, what: string, ms: number): Promise<WireEvent[]> {
    const end = Date.now() + ms;
    for (;;) {
      const all = this.all();
      if (ready(all)) return all;
      if (Date.now() > end) assert.fail(`timed out waiting for ${what}; events so far: ${all.map((e) => `${e.seq}:${e.type}`).join(', ')}`);
      await sleep(20);
    }
  }

  all(): WireEvent[] {
    return [...this.events, ...(this.#current?.events ?? [])];
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#current?.close();
    await Promise.race([this.#done, sleep(3_000)]);
  }

  async #follow(): Promise<void> {
    while (!this.#stopped) {
      const seen = this.all();
      if (seen.length > 0) this.ref = seen[0]!.thread_id; // the key named no row before; the thread id does now
      const client = await connectLive(this.service.port, { thread: this.ref, after: String(seen.at(-1)?.seq ?? 0) }).catch(() => null);
      if (client === null || 'refused' in client) {
        await sleep(100); // refused (503 while storage is down) or not reachable: try again
        continue;
      }
      if (this.#stopped) return client.close();
      this.connections++;
      this.#current = client;
      await client.closed;
      this.events.push(...client.events);
      this.#current = null;
    }
  }
}

const asleepCount = (events: readonly WireEvent[]) => events.filter((event) => event.type === 'reflex_asleep').length;

// The database goes away for a few seconds while runs are under way, on two instances. Appends
// fail meanwhile; a run that cannot be finished holds its turn until its lease lapses and a sweep
// ends it. Afterwards no thread is locked, and no socket has an event twice or misses one.
describe('fault: PostgreSQL stopped and started again during runs', { skip: SKIP ?? false }, () => {
  it('no event is doubled or lost on any socket, and every thread takes a new directive within the lease', async (t) => {
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const cluster = database.cluster!;
    const env = { TURN_LEASE_MS: String(LEASE_MS) };
    const backoff = { backoff: { minMs: 100, maxMs: 1_000 } };
    const a = await startInstance(database, env, backoff);
    undo.push(() => a.close());
    const b = await startInstance(database, env, backoff);
    undo.push(() => b.close());
    // The database is up again before the services close (a failed test may leave it stopped).
    undo.push(() => cluster.start().catch(() => {}));

    const direct = (service: TestService, ref: string, text: string) =>
      service.ask({ method: 'POST', path: `/api/console/threads/${ref}/directives`, headers: { authorization: 'Bearer token-alice' }, body: JSON.stringify({ text }) });

    const threads: { id: string; followers: Follower[] }[] = [];
    for (let i = 0; i < THREADS; i++) {
      const key = randomUUID();
      const followers = [new Follower(a, key), new Follower(b, key)];
      undo.push(() => Promise.all(followers.map((follower) => follower.stop())));
      await Promise.all(followers.map((follower) => follower.until(() => follower.connections > 0, 'the socket', 5_000)));
      const res = await direct(i % 2 === 0 ? a : b, key, `[slow] thread ${i}`);
      assert.equal(res.status, 202, res.text);
      threads.push({ id: res.json().thread_id, followers });
    }
    for (const { followers } of threads) {
      for (const follower of followers) await follower.until((events) => events.some((event) => event.type === 'run_started'), 'run_started', 15_000);
    }

    await cluster.stop();
    await sleep(3_000);
    await cluster.start();
    const restarted = Date.now();

    // Every thread is free again within the lease (and a sweep's interval): a new directive is taken.
    for (const [i, { id }] of threads.entries()) {
      const deadline = Date.now() + LEASE_MS * 3 + 5_000;
      for (;;) {
        const res = await direct(i % 2 === 0 ? b : a, id, `after the restart ${i}`);
        if (res.status === 202) break;
        assert.ok(Date.now() < deadline, `thread ${i} still refuses directives ${Date.now() - restarted} ms after the restart: ${res.status} ${res.text}`);
        await sleep(200);
      }
    }

    for (const [i, { id, followers }] of threads.entries()) {
      for (const [j, follower] of followers.entries()) {
        const name = `thread ${i} on instance ${j === 0 ? 'A' : 'B'}`;
        // Two turns: the one cut by the outage (ended by itself or by a sweep) and the new one.
        await follower.until((events) => asleepCount(events) >= 2, `${name}: both turns to end`, 20_000);
        await sleep(200);
        const stored = (await database.execute(`select seq, type from events where thread_id = '${id}' order by seq`)) as { seq: number; type: string }[];
        const got = follower.all();
        assert.deepEqual(got.map((event) => event.seq), got.map((_, k) => k + 1), `${name}: each event once, none missing, in order`);
        assert.deepEqual(got.map((event) => [event.seq, event.type]), stored.map((row) => [row.seq, row.type]), `${name}: exactly what is stored`);
      }
    }
  });
});
