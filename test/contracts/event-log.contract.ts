import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

/** Builds an empty storage backend; the suite imports the fixture world and logs events on fresh threads. */
export type EventLogFactory = () => Promise<Storage>;

/** The EventLog contract: per-thread seq from 1 without gaps, whatever the concurrency, and replay by seq. */
export function eventLogContract(name: string, factory: EventLogFactory): void {
  describe(`event log contract: ${name}`, () => {
    let storage: Storage;
    before(async () => {
      storage = await factory();
      await storage.importWorld(fixtureWorld());
    });
    after(() => storage.close());

    let keys = 0;
    /** A thread of its own per test, so seq counts start at 1 in each. */
    const freshThread = async () =>
      (await storage.writer.createConsoleThread({
        owner: 'alice', key: `event-log-${keys++}-${Date.now()}`, project: null, title: 't',
        conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
      })).thread.id;
    const seqs = (events: readonly WireEvent[]) => events.map((event) => event.seq);

    it('numbers a thread events from 1, in order, and answers them as stored', async () => {
      const thread = await freshThread();
      const startedAt = Date.now();
      const first = await storage.events.append(thread, 'run_started', { run_id: 'r1', nested: { list: [1, 'two', null] } });
      const second = await storage.events.append(thread, 'message', { text: 'it\'s "quoted" \\ and ? marked, ünïcode 🚀' });
      assert.deepEqual({ ...first, at: '' }, { seq: 1, type: 'run_started', thread_id: thread, at: '', data: { run_id: 'r1', nested: { list: [1, 'two', null] } } });
      assert.equal(second.seq, 2);
      assert.match(first.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(first.at) >= startedAt - 1_000 && Date.parse(first.at) <= Date.now() + 1_000, 'the time it was stored');
      assert.deepEqual(await storage.events.since(thread, 0, 10), [first, second]);
    });

    it('counts each thread on its own', async () => {
      const [a, b] = [await freshThread(), await freshThread()];
      await storage.events.append(a, 'message', {});
      await storage.events.append(a, 'message', {});
      assert.equal((await storage.events.append(b, 'message', {})).seq, 1);
      assert.equal((await storage.events.append(a, 'message', {})).seq, 3);
    });

    it('concurrent appends to one thread each get their own seq: none lost, none doubled', async () => {
      const thread = await freshThread();
      const appended = await Promise.all(Array.from({ length: 25 }, (_, i) => storage.events.append(thread, 'message', { i })));
      const expected = Array.from({ length: 25 }, (_, i) => i + 1);
      assert.deepEqual(seqs(appended).sort((x, y) => x - y), expected);
      const stored = await storage.events.since(thread, 0, 100);
      assert.deepEqual(seqs(stored), expected);
      assert.deepEqual(stored.map((event) => event.data['i']).sort((x, y) => Number(x) - Number(y)), expected.map((n) => n - 1));
    });

    it('pages with since: after a seq, at most limit, in order', async () => {
      const thread = await freshThread();
      for (let i = 0; i < 7; i++) await storage.events.append(thread, 'message', { i });
      assert.deepEqual(seqs(await storage.events.since(thread, 0, 3)), [1, 2, 3]);
      assert.deepEqual(seqs(await storage.events.since(thread, 3, 3)), [4, 5, 6]);
      assert.deepEqual(seqs(await storage.events.since(thread, 6, 3)), [7]);
      assert.deepEqual(await storage.events.since(thread, 7, 3), []);
      assert.deepEqual(seqs(await storage.events.since(thread, 2, 100)), [3, 4, 5, 6, 7]);
      const walked: number[] = [];
      for (let after = 0, page = await storage.events.since(thread, after, 2); page.length > 0; page = await storage.events.since(thread, after, 2)) {
        walked.push(...seqs(page));
        after = page.at(-1)!.seq;
      }
      assert.deepEqual(walked, [1, 2, 3, 4, 5, 6, 7]);
    });

    it('answers nothing for a thread without events', async () => {
      assert.deepEqual(await storage.events.since(await freshThread(), 0, 10), []);
      assert.deepEqual(await storage.events.since('not-a-uuid', 0, 10), []);
    });

    it('answers the last stored seq of a thread, 0 for none', async () => {
      const [thread, other] = [await freshThread(), await freshThread()];
      assert.equal(await storage.events.lastSeq(thread), 0);
      for (let i = 0; i < 3; i++) await storage.events.append(thread, 'message', { i });
      await storage.events.append(other, 'message', {});
      assert.equal(await storage.events.lastSeq(thread), 3);
      assert.equal(await storage.events.lastSeq(other), 1);
      assert.equal(await storage.events.lastSeq('not-a-uuid'), 0);
    });
  });
}
