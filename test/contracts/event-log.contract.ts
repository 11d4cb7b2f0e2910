import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { WireEvent } from '../../domain/events.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

/** Builds an empty storage backend; the suite imports the fixture world and logs events on fresh threads. */
export type EventLogFactory = () => Promise<Storage>;

/**
 * The EventLog contract: per-thread seq from 1 without gaps, whatever the concurrency, and replay by
 * seq; an event's chat posts are stored with it in the delivery outbox, both or neither (issue 26).
 */
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

    describe('posts stored with their event (the chat relay, contract section 9)', () => {
      /** UUIDv7-like ids in increasing order, as the relay takes them: the outbox hands them over oldest first. */
      const run = randomUUID().slice(9, 13);
      let ids = 0;
      const postId = () => `01900000-${run}-7000-8000-${String(ids++).padStart(12, '0')}`;
      const post = (text: string, id = postId()): Delivery => ({
        id, channel: 'team-chat', place: 'general/relay', new_thread: false, address: { channel: 'team-chat', id: 'general/relay' }, title: '', text,
      });
      /** Takes every delivery an earlier case left in the outbox: a case then sees its own alone. */
      const drain = async () => {
        for (let batch = await storage.outbox.claimDue('drain', 60_000, 1_000); batch.length > 0; batch = await storage.outbox.claimDue('drain', 60_000, 1_000)) {
          for (const d of batch) await storage.outbox.delivered(d.id);
        }
      };
      const queued = async () => (await storage.outbox.claimDue(`look-${randomUUID()}`, 60_000, 100)).map(({ attempts, ...d }) => ({ ...d, attempts }));
      /** A post as the outbox answers it: what it asks and whom it is for null when it had none. */
      const claimed = (p: Delivery) => ({ ...p, ask: p.ask ?? null, to: p.to ?? null, attempts: 0, handed_before: false });

      it('an event with posts stores them in the outbox, due at once, in id order; without posts it stores none', async () => {
        await drain();
        const thread = await freshThread();
        const plain = await storage.events.append(thread, 'message', { i: 0 });
        assert.deepEqual(await queued(), [], 'no post without posts');
        const parts = [post('part one, "quoted" ? marked ünïcode 🚀'), post('part two'), post('part three')];
        const event = await storage.events.append(thread, 'message', { i: 1 }, parts);
        assert.equal(event.seq, plain.seq + 1);
        assert.deepEqual(await storage.events.since(thread, plain.seq, 10), [event]);
        assert.deepEqual(await queued(), parts.map(claimed));
        await drain();
      });

      it("a post's ask and recipient are stored with it and claimed as they were", async () => {
        await drain();
        const thread = await freshThread();
        const ask = {
          pending_id: randomUUID(), kind: 'question' as const, title: 'Which "one"? ünïcode 🚀',
          options: [{ id: 'a', name: 'First' }, { id: 'b', name: "The other's" }],
        };
        const asking: Delivery = { ...post('1. First\n2. The other\'s'), ask, to: 'bob@chat.example' };
        const plain: Delivery = { ...post('nothing asked'), ask: null, to: null };
        await storage.events.append(thread, 'question_asked', { i: 0 }, [asking, plain]);
        assert.deepEqual(await queued(), [{ ...asking, attempts: 0, handed_before: false }, { ...plain, attempts: 0, handed_before: false }]);
        await drain();
      });

      it('a post whose id the outbox holds already is left as it is: a replay doubles no post', async () => {
        await drain();
        const thread = await freshThread();
        const first = post('the reply');
        await storage.events.append(thread, 'message', { i: 0 }, [first]);
        const second = post('another');
        await storage.events.append(thread, 'message', { i: 1 }, [{ ...first, text: 'changed' }, second]);
        assert.deepEqual(await queued(), [claimed(first), claimed(second)]);
        await drain();
      });

      it('an event that cannot be stored stores none of its posts', async () => {
        await drain();
        await assert.rejects(storage.events.append(randomUUID(), 'message', {}, [post('orphan')]), 'no such thread');
        assert.deepEqual(await queued(), []);
      });

      it('a post that cannot be stored stores no event, and no other post: nothing is written halfway', async () => {
        await drain();
        const thread = await freshThread();
        await storage.events.append(thread, 'message', { i: 0 });
        await assert.rejects(storage.events.append(thread, 'message', { i: 1 }, [post('fine'), post('bad id', 'not-a-uuid')]));
        assert.equal(await storage.events.lastSeq(thread), 1, 'the event was not stored');
        assert.deepEqual(await queued(), [], 'nor its good post');
        const next = await storage.events.append(thread, 'message', { i: 2 }, [post('after')]);
        assert.equal(next.seq, 2, 'no seq was used up');
        assert.equal((await queued()).length, 1);
        await drain();
      });

      it('a post the storage cannot copy as it is (a function in it) is stored whole with its event, or neither is', async () => {
        await drain();
        const thread = await freshThread();
        await storage.events.append(thread, 'message', { i: 0 });
        const odd = { ...post('with a function'), address: { channel: 'team-chat', id: 'general/relay', at: () => 'x' } } as unknown as Delivery;
        const stored = await storage.events.append(thread, 'message', { i: 1 }, [post('fine'), odd]).then(() => true, () => false);
        // Refused: nothing of it is written. Taken (JSON drops the function): the event and both posts are.
        assert.equal(await storage.events.lastSeq(thread), stored ? 2 : 1, 'the event goes with its posts');
        assert.equal((await queued()).length, stored ? 2 : 0, 'the posts go with their event');
        await drain();
      });

      it('an append under a key the thread holds stores nothing, posts nothing, and answers the first (issue 41)', async () => {
        await drain();
        const thread = await freshThread();
        const other = await freshThread();
        const first = await storage.events.append(thread, 'run_error', { try: 1 }, [post('The turn failed')], 'run/r1/end');
        await storage.events.append(thread, 'message', { between: true });
        const again = await storage.events.append(thread, 'run_error', { try: 2 }, [post('The turn failed again')], 'run/r1/end');
        assert.deepEqual(again, first, 'the first event, as stored');
        assert.equal(await storage.events.lastSeq(thread), 2, 'nothing stored the second time');
        assert.equal((await queued()).length, 1, 'its post stored once');
        // A key is the thread's own: another thread, or another key, stores as usual.
        assert.equal((await storage.events.append(other, 'run_error', {}, [], 'run/r1/end')).seq, 1);
        assert.equal((await storage.events.append(thread, 'reflex_asleep', {}, [], 'run/r1/asleep')).seq, 3);
        await drain();
      });

      it('concurrent appends under one key store one event and its posts once', async () => {
        await drain();
        const thread = await freshThread();
        const events = await Promise.all(Array.from({ length: 8 }, (_, i) => storage.events.append(thread, 'run_finished', { i }, [post(`end ${i}`)], 'run/r2/end')));
        assert.equal(new Set(events.map((e) => e.seq)).size, 1, 'every append answers the one event');
        assert.equal(await storage.events.lastSeq(thread), 1);
        assert.equal((await queued()).length, 1);
        await drain();
      });

      it('concurrent appends with posts each store their own: none lost, none doubled', async () => {
        await drain();
        const thread = await freshThread();
        const made = Array.from({ length: 12 }, (_, i) => [post(`a${i}`), post(`b${i}`)]);
        const events = await Promise.all(made.map((posts, i) => storage.events.append(thread, 'message', { i }, posts)));
        assert.deepEqual(seqs(events).sort((x, y) => x - y), Array.from({ length: 12 }, (_, i) => i + 1));
        const stored = await queued();
        assert.deepEqual(stored.map((d) => d.id).sort(), made.flat().map((d) => d.id).sort());
        await drain();
      });
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
