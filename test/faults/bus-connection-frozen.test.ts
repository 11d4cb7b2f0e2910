import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import type { BusSignal } from '../../ports/event-bus.ts';
import { faultDatabaseUnavailable, openFaultDatabase } from '../support/fault-cluster.ts';
import { F } from '../support/fixture-world.ts';
import { startFreezableProxy } from '../support/freezable-proxy.ts';

const SKIP = faultDatabaseUnavailable(false);
if (SKIP !== null) console.log(`# frozen bus connection tests skipped: ${SKIP}`);

/** The bus's time-outs in these tests: short, so that a freeze is noticed quickly. */
const TIMEOUTS = { connectMs: 300, queryMs: 300, heartbeatMs: 200 };
/** How long a publish may take while its connection is frozen: the query time-out and some slack. */
const PUBLISH_BOUND_MS = 2_000;

/** Polls until `ready()` holds; fails after `ms`. */
async function until(ready: () => boolean, what: () => string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what()}`);
    await sleep(10);
  }
}

/** Resolves with how long `work` took; fails the test when it takes longer than `ms`. */
async function bounded(work: Promise<unknown>, ms: number, what: string): Promise<number> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not resolve within ${ms} ms`)), ms);
  });
  try {
    await Promise.race([work, hung]);
  } finally {
    clearTimeout(timer);
  }
  return Date.now() - start;
}

// The publishing instance's bus connection goes through a proxy that stops delivering bytes, as a
// frozen database or a black-holed network does: nothing is closed, nothing answers.
describe('fault: the PostgreSQL bus connection frozen (no answer, no close)', { skip: SKIP ?? false }, () => {
  it('publish resolves within a bound, and once the connection is back another instance gets every event, in order', async (t) => {
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const storage = await createMikroOrmStorage({ clientUrl: database.url, pool: 2 });
    undo.push(() => storage.close());
    const proxy = await startFreezableProxy(database.url);
    undo.push(() => proxy.close());

    const publisher = await createPostgresEventBus({ url: proxy.url, events: storage.events, local: createMemoryEventBus(), timeouts: TIMEOUTS, backoff: { minMs: 50, maxMs: 200 } });
    undo.push(() => publisher.close());
    const peer = await createPostgresEventBus({ url: database.url, events: storage.events, local: createMemoryEventBus() });
    undo.push(() => peer.close());
    const got: number[] = [];
    peer.subscribe(F.root, (event) => got.push(event.seq));
    const reconnects: BusSignal[] = [];
    publisher.onSignal((signal) => signal.kind === 'reconnected' && reconnects.push(signal));

    /** Stores an event, then publishes it, as the service does; answers the publish and the event's seq. */
    const publish = async (text: string) => {
      const event = await storage.events.append(F.root, 'message', { text });
      return { seq: event.seq, published: publisher.publish(event) };
    };

    const first = await publish('before the freeze');
    await first.published;
    await until(() => got.includes(first.seq), () => `the first event reached the peer (got ${JSON.stringify(got)})`);

    proxy.freeze();
    // Cut mid-send: sent on the frozen connection, pipelined behind one another.
    const cut = [await publish('cut 1'), await publish('cut 2'), await publish('cut 3')];
    for (const { published } of cut) await bounded(published, PUBLISH_BOUND_MS, 'a publish on the frozen connection');
    // Announced while the connection is down (reconnects keep timing out against the frozen proxy).
    const down = [await publish('down 1'), await publish('down 2')];
    for (const { published } of down) await bounded(published, PUBLISH_BOUND_MS, 'a publish while the connection is down');
    await sleep(300);
    assert.deepEqual(got, [first.seq], 'nothing crossed while frozen');

    proxy.thaw();
    const expected = [first, ...cut, ...down].map((sent) => sent.seq);
    await until(() => expected.every((seq) => got.includes(seq)), () => `every event reached the peer: ${JSON.stringify(got)}, expected ${JSON.stringify(expected)}`);
    assert.ok(reconnects.length >= 1, 'the publisher reconnected');
    // In order; a repeat of an announcement whose NOTIFY did go out would be harmless (Delivery skips a sent seq).
    assert.deepEqual(got.filter((seq, i) => got.indexOf(seq) === i), expected);
    assert.deepEqual([...got].sort((a, b) => a - b), got, `in order: ${JSON.stringify(got)}`);
  });

  it('an instance that only listens notices a frozen connection (its idle check times out) and reconnects', async (t) => {
    const undo: (() => unknown)[] = [];
    t.after(async () => {
      for (const step of undo.reverse()) await step();
    });
    const database = await openFaultDatabase();
    undo.push(() => database.destroy());
    const storage = await createMikroOrmStorage({ clientUrl: database.url, pool: 2 });
    undo.push(() => storage.close());
    const proxy = await startFreezableProxy(database.url);
    undo.push(() => proxy.close());

    const errors: unknown[] = [];
    const listener = await createPostgresEventBus({
      url: proxy.url, events: storage.events, local: createMemoryEventBus({ onListenerError: (error) => errors.push(error) }), timeouts: TIMEOUTS, backoff: { minMs: 50, maxMs: 200 }, onError: (error) => errors.push(error),
    });
    undo.push(() => listener.close());
    const sender = await createPostgresEventBus({ url: database.url, events: storage.events, local: createMemoryEventBus() });
    undo.push(() => sender.close());
    const got: number[] = [];
    listener.subscribe(F.root, (event) => got.push(event.seq));
    const reconnects: BusSignal[] = [];
    listener.onSignal((signal) => signal.kind === 'reconnected' && reconnects.push(signal));

    proxy.freeze();
    await until(() => errors.length > 0, () => 'the frozen connection was noticed', 5_000);
    proxy.thaw();
    await until(() => reconnects.length > 0, () => `the listener reconnected (errors: ${errors.map(String).join('; ')})`);
    const event = await storage.events.append(F.root, 'message', { text: 'after the thaw' });
    await sender.publish(event);
    await until(() => got.includes(event.seq), () => 'an event published after the reconnect arrived');
  });
});
