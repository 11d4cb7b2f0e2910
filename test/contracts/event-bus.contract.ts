import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import type { BusSignal, EventBus } from '../../ports/event-bus.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

/** What a bus suite runs on: a storage (events are stored before they are published) and the buses. */
export interface BusFixture {
  /** Empty; the suite imports the fixture world. */
  readonly storage: Storage;
  readonly bus: EventBus;
  /** A second instance on the same database, or null for a bus that lives in one process. */
  readonly peer: EventBus | null;
  /** Cuts the buses' connections to the database (they must come back), where there are any. */
  readonly dropConnections: (() => Promise<void>) | null;
}

export type EventBusFactory = () => Promise<BusFixture>;

/** Polls until `ready()` holds; fails after `ms`. */
async function until(ready: () => boolean, what: string, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The EventBus contract: fan-out by thread, in order, unsubscribe, signals, and (with a peer) across instances. */
export function eventBusContract(name: string, factory: EventBusFactory): void {
  describe(`event bus contract: ${name}`, () => {
    let fixture: BusFixture;
    before(async () => {
      fixture = await factory();
      await fixture.storage.importWorld(fixtureWorld());
    });
    after(async () => {
      await fixture.bus.close();
      await fixture.peer?.close();
      await fixture.storage.close();
    });

    const thread = async () => (await fixture.storage.writer.createConsoleThread({
      owner: 'alice', key: randomUUID(), project: null, title: 't', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
    })).thread.id;
    /** Stores an event, then publishes it on `bus`, as the service does. */
    const publish = async (bus: EventBus, threadId: string, data: Record<string, unknown> = {}) => {
      const event = await fixture.storage.events.append(threadId, 'message', data);
      await bus.publish(event);
      return event;
    };
    const collect = (bus: EventBus, threadId: string) => {
      const got: WireEvent[] = [];
      const unsubscribe = bus.subscribe(threadId, (event) => got.push(event));
      return { got, seqs: () => got.map((event) => event.seq), unsubscribe };
    };
    /** The peer, or null after marking the test skipped (decided at run time: the fixture is built in `before`). */
    const peerOf = (t: { skip: (message: string) => void }): EventBus | null => {
      if (fixture.peer === null) t.skip('a bus of one process has no other instance');
      return fixture.peer;
    };

    it('delivers to the subscribers of the event thread only, each once, in publish order', async () => {
      const [a, b, c] = [await thread(), await thread(), await thread()];
      const [onA, alsoOnA, onB, onC] = [collect(fixture.bus, a), collect(fixture.bus, a), collect(fixture.bus, b), collect(fixture.bus, c)];
      await publish(fixture.bus, a);
      await publish(fixture.bus, b);
      await publish(fixture.bus, a);
      const last = await publish(fixture.bus, a, { text: 'last' });
      await until(() => onA.got.length >= 3 && alsoOnA.got.length >= 3 && onB.got.length >= 1, 'delivery');
      await sleep(50); // a window in which nothing more, and nothing to c, must arrive
      assert.deepEqual(onA.seqs(), [1, 2, 3]);
      assert.deepEqual(alsoOnA.seqs(), [1, 2, 3]);
      assert.deepEqual(onA.got[2], last);
      assert.deepEqual(onB.seqs(), [1]);
      assert.deepEqual(onC.got, []);
    });

    it('stops delivering after unsubscribe', async () => {
      const a = await thread();
      const gone = collect(fixture.bus, a);
      const stays = collect(fixture.bus, a);
      await publish(fixture.bus, a);
      await until(() => gone.got.length === 1 && stays.got.length === 1, 'the first event');
      gone.unsubscribe();
      gone.unsubscribe(); // twice is harmless
      await publish(fixture.bus, a);
      await until(() => stays.got.length === 2, 'the second event');
      assert.deepEqual(gone.seqs(), [1]);
    });

    it('a listener that throws does not keep the event from the others', async () => {
      const a = await thread();
      fixture.bus.subscribe(a, () => {
        throw new Error('listener bug');
      });
      const after = collect(fixture.bus, a);
      await publish(fixture.bus, a);
      await publish(fixture.bus, a);
      await until(() => after.got.length === 2, 'both events');
    });

    it('sends signals to onSignal listeners of this instance, until they unsubscribe', async () => {
      const got: BusSignal[] = [];
      const unsubscribe = fixture.bus.onSignal((signal) => got.push(signal));
      const created: BusSignal = { kind: 'thread_created', owner: 'alice', key: randomUUID(), thread_id: await thread() };
      const answered: BusSignal = { kind: 'pending_answered', answers: [{ id: randomUUID(), option: 'allow' }, { id: randomUUID(), answer: 'main' }] };
      await fixture.bus.signal(created);
      await fixture.bus.signal(answered);
      await until(() => got.length >= 2, 'both signals');
      assert.deepEqual(got, [created, answered]);
      unsubscribe();
      await fixture.bus.signal(created);
      await sleep(50); // a window in which nothing must reach the unsubscribed listener
      assert.equal(got.length, 2);
    });

    it('with two instances: a publish on one reaches the other subscribers, in order, and its own once', async (t) => {
      const peer = peerOf(t);
      if (peer === null) return;
      const [a, b] = [await thread(), await thread()];
      const [there, elsewhere, here] = [collect(peer, a), collect(peer, b), collect(fixture.bus, a)];
      for (let i = 0; i < 10; i++) await publish(fixture.bus, a, { i });
      await until(() => there.got.length === 10, 'the peer delivery');
      await sleep(200); // time for a notification echo to arrive, if it were delivered again
      assert.deepEqual(there.seqs(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      assert.deepEqual(here.seqs(), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'the publisher subscribers, exactly once');
      assert.deepEqual(elsewhere.got, []);
      there.unsubscribe();
      await publish(fixture.bus, a);
      const marker = collect(peer, b);
      await publish(fixture.bus, b);
      await until(() => marker.got.length === 1, 'the marker');
      assert.equal(there.got.length, 10, 'unsubscribed on the peer');
    });

    it('with two instances: an event too large for a notification arrives whole and in order', async (t) => {
      const peer = peerOf(t);
      if (peer === null) return;
      const a = await thread();
      const there = collect(peer, a);
      await publish(fixture.bus, a, { text: 'small' });
      const big = await publish(fixture.bus, a, { text: 'é'.repeat(20_000) });
      await publish(fixture.bus, a, { text: 'small again' });
      await until(() => there.got.length === 3, 'three events');
      assert.deepEqual(there.seqs(), [1, 2, 3]);
      assert.deepEqual(there.got[1], big);
    });

    it('with two instances: signals reach the other instance, a large one whole', async (t) => {
      const peer = peerOf(t);
      if (peer === null) return;
      const got: BusSignal[] = [];
      peer.onSignal((signal) => got.push(signal));
      const small: BusSignal = { kind: 'thread_created', owner: 'alice', key: randomUUID(), thread_id: await thread() };
      const large: BusSignal = { kind: 'pending_answered', answers: [{ id: randomUUID(), answer: `"quoted" \\ ${'ü🚀'.repeat(9_000)}` }] };
      await fixture.bus.signal(small);
      await fixture.bus.signal(large);
      await until(() => got.length === 2, 'both signals');
      assert.deepEqual(got, [small, large]);
    });

    it('a signal named reconnected stays on this instance', async (t) => {
      const peer = peerOf(t);
      if (peer === null) return;
      const here: BusSignal[] = [];
      const there: BusSignal[] = [];
      const stops = [fixture.bus.onSignal((signal) => here.push(signal)), peer.onSignal((signal) => there.push(signal))];
      t.after(() => stops.forEach((stop) => stop()));
      await fixture.bus.signal({ kind: 'reconnected' });
      const marker: BusSignal = { kind: 'cancel_requested', run_id: randomUUID() };
      await fixture.bus.signal(marker);
      await until(() => there.length >= 1, 'the marker on the peer');
      assert.deepEqual(here, [{ kind: 'reconnected' }, marker]);
      assert.deepEqual(there, [marker], 'the peer had no reconnect of its own');
    });

    it('tells its onSignal listeners, once per instance, when its connection is back after a drop', async (t) => {
      if (fixture.dropConnections === null) return t.skip('a bus without a connection never reconnects');
      const here: BusSignal[] = [];
      const there: BusSignal[] = [];
      const stopHere = fixture.bus.onSignal((signal) => here.push(signal));
      const stopThere = fixture.peer?.onSignal((signal) => there.push(signal));
      await fixture.dropConnections();
      const reconnects = (got: BusSignal[]) => got.filter((signal) => signal.kind === 'reconnected').length;
      await until(() => reconnects(here) === 1 && (fixture.peer === null || reconnects(there) === 1), 'the reconnected signals', 15_000);
      await sleep(300); // a window in which no second reconnected signal must come
      assert.equal(reconnects(here), 1);
      if (fixture.peer !== null) assert.equal(reconnects(there), 1, 'each instance tells its own, not the other');
      stopHere();
      stopThere?.();
    });

    it('with two instances: delivery resumes after the connections drop', async (t) => {
      const peer = peerOf(t);
      if (peer === null) return;
      if (fixture.dropConnections === null) return t.skip('no connection to drop');
      const a = await thread();
      const there = collect(peer, a);
      await fixture.dropConnections();
      // Sent while the buses may still be reconnecting, and delivery is at most once: publish until one arrives.
      const end = Date.now() + 15_000;
      while (there.got.length === 0) {
        assert.ok(Date.now() < end, 'timed out waiting for delivery after reconnecting');
        await publish(fixture.bus, a);
        await sleep(100);
      }
    });
  });
}
