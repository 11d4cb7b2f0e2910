import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { QUEUE_LIMIT } from '../../domain/bounds.ts';
import type { Conversation, Thread } from '../../domain/model.ts';
import type { DequeuedTurn } from '../../ports/turn-handover.ts';
import type { DirectiveOutcome, DirectiveWrite } from '../../ports/directive-writes.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { summonOf } from './storage-writer-turns.contract.ts';

/** One backend for the suite: a storage, and another over the same data (a second instance). */
export interface QueueBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

type Created = { readonly thread: Thread; readonly conversation: Conversation };

const LEASE = { holder: 'queue-contract', ms: 60_000 };
/** Rounds of each race: enough for an interleaving to show where a start and an edit or revoke are not one decision. */
const ROUNDS = 10;

/**
 * The queue's contract, QueueEdits and TurnHandover (contract section 7): queued directives are rows, run one per turn in
 * order, each exactly once, whatever races: a hand-over and an edit or revoke of the item it starts,
 * two instances handing over the same turn, two sweepers finding the same idle queue.
 */
export function directiveQueueContract(name: string, open: () => Promise<QueueBackend>): void {
  describe(`directive queue contract: ${name}`, () => {
    let backend: QueueBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      await backend.storage.importWorld(fixtureWorld());
      other = await backend.reopen();
    });
    after(() => backend.close());
    const storage = () => backend.storage;

    const newThread = (): Promise<Created> =>
      storage().writer.createConsoleThread({
        owner: 'alice', key: randomUUID(), project: 'acme-web', title: 'Queue',
        conversation: { agent: 'claude', model: 'opus', permission_mode: 'default', effort: null },
      });
    const directive = (t: Created, fields: Partial<DirectiveWrite> = {}): DirectiveWrite => ({
      thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: randomUUID(), author: 'alice', text: 'Fix the build',
      directory: '/srv/acme', permission_mode: null, lease: LEASE, ...fields,
    });
    const queue = (t: Created, text: string, fields: Partial<DirectiveWrite> = {}) =>
      storage().writer.writeDirective(directive(t, { text, when_busy: { mode: 'queue', author: 'alice' }, ...fields }));
    const queuedItem = (outcome: DirectiveOutcome) => {
      assert.equal(outcome.kind, 'queued');
      return (outcome as Extract<DirectiveOutcome, { kind: 'queued' }>).item;
    };
    /** A thread with a turn running, answered with that turn's run id. */
    const busyThread = async (): Promise<Created & { run: string }> => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t, { text: 'first' }));
      assert.ok(started.kind === 'started');
      return { ...t, run: started.run.id };
    };
    /** Ends a run and hands its turn over: the next queued directive's turn, or null. */
    const endTurn = async (runId: string, on: Storage = storage()): Promise<DequeuedTurn | null> => {
      await on.writer.finishRun(runId, 'succeeded', null);
      return on.writer.handOverTurn(runId, LEASE);
    };
    const ledger = async (threadId: string) => (await storage().ledger.page([{ thread_id: threadId, upTo: null }], { limit: 200, before: null })).items;
    const texts = async (threadId: string) => (await storage().writer.queued(threadId)).map((q) => q.text);

    it('queues directives while a turn runs, each with its ledger message and queued event, and runs them one per turn, in order', async () => {
      const t = await busyThread();
      const items = [];
      for (const text of ['one', 'two', 'three']) items.push(queuedItem(await queue(t, text)));
      assert.deepEqual(items.map((item) => item.position), [1, 2, 3]);
      assert.deepEqual(await storage().writer.queued(t.thread.id), items);
      const messages = await ledger(t.thread.id);
      for (const item of items) assert.equal(messages.find((m) => m.id === item.message_id)?.text, item.text, 'its ledger message is written when queued');
      const queuedEvents = (await storage().events.since(t.thread.id, 0, 100)).filter((e) => e.type === 'queued');
      assert.deepEqual(queuedEvents.map((e) => e.data), items);
      // Only the running turn has its run_started (written with its directive): a queued one gets it when its turn starts.
      const runStarts = (await storage().events.since(t.thread.id, 0, 100)).filter((e) => e.type === 'run_started');
      assert.deepEqual(runStarts.map((e) => (e.data as { run_id: string }).run_id), [t.run], 'no run_started for a queued directive');

      let run = t.run;
      for (const item of items) {
        const next = await endTurn(run);
        assert.ok(next !== null, `${item.text} starts`);
        assert.deepEqual(next.item, { ...item, position: 1 });
        assert.equal(next.message.id, item.message_id);
        assert.equal(next.run.status, 'running');
        assert.equal(next.run.directory, '/srv/acme');
        assert.equal(next.conversation.turn_running, true);
        assert.equal(next.event.type, 'dequeued');
        assert.deepEqual(next.event.data, { id: item.id, run_id: next.run.id, conversation_id: t.conversation.id, message: next.message });
        assert.equal((await storage().writer.runningTurn(t.thread.id))?.run_id, next.run.id, 'its turn is claimed with it');
        run = next.run.id;
      }
      assert.equal(await endTurn(run), null, 'nothing left to start');
      assert.equal(await storage().writer.runningTurn(t.thread.id), null);
      assert.deepEqual(await storage().writer.queued(t.thread.id), []);
    });

    it("keeps a directive's origin (a schedule's, a hook's) on its ledger message, on its queued item and on the message when the item runs; a person's is null", async () => {
      const scheduled = { kind: 'schedule' as const, id: randomUUID() };
      const hooked = { kind: 'hook' as const, id: randomUUID() };
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t, { text: 'scheduled', origin: scheduled }));
      assert.ok(started.kind === 'started');
      assert.deepEqual(started.message.origin, scheduled);
      assert.deepEqual((started.event.data as { message: { origin: unknown } }).message.origin, scheduled, 'its message event carries it');
      const fromHook = queuedItem(await queue(t, 'hooked', { origin: hooked }));
      const byPerson = queuedItem(await queue(t, 'typed'));
      assert.deepEqual([fromHook.origin, byPerson.origin], [hooked, null]);
      assert.deepEqual((await storage().writer.queued(t.thread.id)).map((q) => q.origin), [hooked, null], 'the queue reads it');
      const queuedEvents = (await storage().events.since(t.thread.id, 0, 100)).filter((e) => e.type === 'queued');
      assert.deepEqual(queuedEvents.map((e) => (e.data as { origin: unknown }).origin), [hooked, null]);
      // Read by another instance: what is stored, not what this one remembers.
      const read = async (on: Storage) => (await on.ledger.page([{ thread_id: t.thread.id, upTo: null }], { limit: 200, before: null })).items;
      for (const on of [storage(), other]) {
        const byId = new Map((await read(on)).map((m) => [m.id, m.origin]));
        assert.deepEqual([byId.get(started.message.id), byId.get(fromHook.message_id), byId.get(byPerson.message_id)], [scheduled, hooked, null]);
      }
      const next = await endTurn(started.run.id);
      assert.ok(next !== null);
      assert.deepEqual([next.item.origin, next.message.origin], [hooked, hooked], 'a queued directive keeps its origin when it runs');
      assert.deepEqual((next.event.data as { message: { origin: unknown } }).message.origin, hooked);
      assert.deepEqual((await other.writer.unsentTurn(next.run.id))?.message.origin, hooked, 'and when its turn is started again elsewhere');
      const last = await endTurn(next.run.id);
      assert.deepEqual([last?.item.origin, last?.message.origin], [null, null]);
      await endTurn(last!.run.id);
      const plain = await storage().writer.writeDirective(directive(t, { text: 'typed again' }));
      assert.ok(plain.kind === 'started');
      assert.equal(plain.message.origin, null, "a person's directive has none");
    });

    it("counts a thread's queued directives in the thread list's activity, as they are queued, withdrawn and started", async () => {
      const t = await busyThread();
      const listed = async () => {
        const page = await storage().threads.listAccessible('alice', { limit: 5, before: null });
        return page?.items.find((item) => item.id === t.thread.id)?.activity;
      };
      assert.deepEqual(await listed(), { turn_running: true, approvals: 0, questions: 0, queued: 0 });
      const first = queuedItem(await queue(t, 'one'));
      queuedItem(await queue(t, 'two', { when_busy: { mode: 'queue', author: 'bob' } }));
      queuedItem(await queue(t, 'three'));
      assert.equal((await listed())?.queued, 3);
      const revoked = await storage().writer.revokeQueued(t.thread.id, first.id, { user: 'alice', owner: true }, 'Withdrawn: one');
      assert.equal(revoked.kind, 'done');
      assert.equal((await listed())?.queued, 2);
      const next = await endTurn(t.run);
      assert.equal(next?.item.text, 'two');
      assert.deepEqual(await listed(), { turn_running: true, approvals: 0, questions: 0, queued: 1 }, 'the started one left the count');
      const elsewhere = await newThread();
      assert.equal((await storage().threads.listAccessible('alice', { limit: 5, before: null }))?.items.find((item) => item.id === elsewhere.thread.id)?.activity.queued, 0,
        "another thread's queue is not counted");
    });

    it('an interrupt is queued first and names the running turn to cancel', async () => {
      const t = await busyThread();
      queuedItem(await queue(t, 'later'));
      const outcome = await storage().writer.writeDirective(directive(t, { text: 'now', when_busy: { mode: 'interrupt', author: 'alice' } }));
      assert.ok(outcome.kind === 'queued');
      assert.equal(outcome.interrupts, t.run);
      assert.equal(outcome.item.position, 1);
      assert.deepEqual(outcome.answer.queued, { id: outcome.item.id, position: 1 });
      assert.deepEqual(await texts(t.thread.id), ['now', 'later']);
      assert.equal((await endTurn(t.run))?.item.text, 'now');
    });

    it('a directive that does not queue is refused on a busy thread, and on an idle one whose queue waits; neither writes anything', async () => {
      const t = await busyThread();
      assert.deepEqual(await storage().writer.writeDirective(directive(t)), { kind: 'busy' });
      queuedItem(await queue(t, 'waiting'));
      // The turn let go without a hand-over (as a crash would leave it): idle, with a queue.
      await storage().writer.finishRun(t.run, 'succeeded', null);
      await storage().writer.releaseTurn(t.run);
      const before = { ledger: await ledger(t.thread.id), events: await storage().events.since(t.thread.id, 0, 100) };
      assert.deepEqual(await storage().writer.writeDirective(directive(t)), { kind: 'queue_not_empty' });
      assert.deepEqual(await ledger(t.thread.id), before.ledger);
      assert.deepEqual(await storage().events.since(t.thread.id, 0, 100), before.events);
    });

    it('a repeated message_id answers the queued answer again and queues nothing more', async () => {
      const t = await busyThread();
      const write = directive(t, { text: 'once', when_busy: { mode: 'queue', author: 'alice' } });
      const outcomes = await Promise.all([storage().writer.writeDirective(write), other.writer.writeDirective(write)]);
      assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['queued', 'repeated']);
      const queued = outcomes.find((o) => o.kind === 'queued')!;
      const repeated = outcomes.find((o) => o.kind === 'repeated')!;
      assert.ok(queued.kind === 'queued' && repeated.kind === 'repeated');
      assert.deepEqual(repeated.answer, queued.answer);
      assert.deepEqual(await texts(t.thread.id), ['once']);
      // Still the queued answer after it started.
      await endTurn(t.run);
      assert.deepEqual(await storage().writer.writeDirective(write), { kind: 'repeated', answer: queued.answer });
    });

    it(`holds at most ${QUEUE_LIMIT} per thread: one more is queue_full and writes nothing`, async () => {
      const t = await busyThread();
      for (let i = 0; i < QUEUE_LIMIT; i++) queuedItem(await queue(t, `item ${i}`));
      const before = (await ledger(t.thread.id)).length;
      assert.deepEqual(await queue(t, 'one too many'), { kind: 'queue_full' });
      assert.deepEqual(await storage().writer.writeDirective(directive(t, { when_busy: { mode: 'interrupt', author: 'alice' } })), { kind: 'queue_full' });
      assert.equal((await ledger(t.thread.id)).length, before);
      assert.equal((await storage().writer.queued(t.thread.id)).length, QUEUE_LIMIT);
    });

    it('an edit changes the text that runs and its ledger message; a revoked item never runs and the ledger says so', async () => {
      const t = await busyThread();
      const a = queuedItem(await queue(t, 'a'));
      const b = queuedItem(await queue(t, 'b', { when_busy: { mode: 'queue', author: 'bob' } }));
      const c = queuedItem(await queue(t, 'c'));
      // Bob wrote b: he may change it, not a; the owner may change any.
      assert.deepEqual(await storage().writer.editQueued(t.thread.id, a.id, { user: 'bob', owner: false }, 'x'), { kind: 'forbidden' });
      const edited = await storage().writer.editQueued(t.thread.id, b.id, { user: 'bob', owner: false }, 'b, edited');
      assert.ok(edited.kind === 'done');
      assert.deepEqual(edited.item, { ...b, text: 'b, edited' });
      assert.deepEqual(edited.events.map((e) => [e.type, e.data]), [['queued', edited.item]]);
      assert.equal((await ledger(t.thread.id)).find((m) => m.id === b.message_id)?.text, 'b, edited');
      assert.deepEqual(await storage().writer.revokeQueued(t.thread.id, c.id, { user: 'bob', owner: false }, 'withdrawn'), { kind: 'forbidden' });
      const revoked = await storage().writer.revokeQueued(t.thread.id, a.id, { user: 'alice', owner: true }, 'Withdrawn: a');
      assert.ok(revoked.kind === 'done');
      assert.deepEqual(revoked.events.map((e) => e.type), ['dequeued', 'message']);
      assert.deepEqual(revoked.events[0]!.data, { id: a.id, run_id: null, withdrawn: true });
      const line = (await ledger(t.thread.id))[0]!;
      assert.deepEqual([line.role, line.text], ['system', 'Withdrawn: a']);
      assert.ok((await ledger(t.thread.id)).some((m) => m.id === a.message_id), 'its own message stays');
      assert.deepEqual((await storage().writer.queued(t.thread.id)).map((q) => [q.text, q.position]), [['b, edited', 1], ['c', 2]]);
      const next = await endTurn(t.run);
      assert.equal(next?.item.text, 'b, edited');
      assert.equal(next?.message.text, 'b, edited');
      // Started or withdrawn: gone, for the author and the owner alike; another thread's item is gone too.
      assert.deepEqual(await storage().writer.editQueued(t.thread.id, b.id, { user: 'alice', owner: true }, 'late'), { kind: 'gone' });
      assert.deepEqual(await storage().writer.revokeQueued(t.thread.id, a.id, { user: 'alice', owner: true }, 'again'), { kind: 'gone' });
      const elsewhere = await newThread();
      assert.deepEqual(await storage().writer.revokeQueued(elsewhere.thread.id, c.id, { user: 'alice', owner: true }, 'x'), { kind: 'gone' });
      assert.equal((await endTurn(next!.run.id))?.item.text, 'c');
    });

    it("an edit takes the text out of the item's earlier queued events: the log holds each item's latest text once", async () => {
      const t = await busyThread();
      const a = queuedItem(await queue(t, 'a0'));
      const b = queuedItem(await queue(t, 'b0'));
      const seqs: number[] = [];
      for (const text of ['a1', 'a2', 'a3']) {
        const edited = await storage().writer.editQueued(t.thread.id, a.id, { user: 'alice', owner: true }, text);
        assert.ok(edited.kind === 'done');
        // What is published is the item whole, with its new text.
        assert.deepEqual(edited.events.map((e) => [e.type, e.data]), [['queued', edited.item]]);
        seqs.push(edited.events[0]!.seq);
      }
      const events = (await storage().events.since(t.thread.id, 0, 100)).filter((e) => e.type === 'queued');
      const ofA = events.filter((e) => e.data.id === a.id);
      const { text: _text, ...rest } = a;
      const first = events.find((e) => e.data.id === a.id)!;
      assert.deepEqual(ofA.map((e) => e.data), [
        { ...rest, superseded_by: seqs[0] },
        { ...rest, superseded_by: seqs[1] },
        { ...rest, superseded_by: seqs[2] },
        { ...a, text: 'a3' },
      ], 'each earlier event names the one that replaced it');
      assert.ok(first.seq < seqs[0]!);
      // Another item's events are left as they are; the seqs are all still there, in order.
      assert.deepEqual(events.filter((e) => e.data.id === b.id).map((e) => e.data), [b]);
      const all = await storage().events.since(t.thread.id, 0, 100);
      assert.deepEqual(all.map((e) => e.seq), all.map((_, i) => i + 1));
      assert.equal((await endTurn(t.run))?.item.text, 'a3');
    });

    it('a revoke racing the start of its item: either it was revoked and never runs, or it started and the revoke is gone', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const t = await busyThread();
        const item = queuedItem(await queue(t, 'racing'));
        await storage().writer.finishRun(t.run, 'succeeded', null);
        const [started, revoked] = await Promise.all([
          storage().writer.handOverTurn(t.run, LEASE),
          other.writer.revokeQueued(t.thread.id, item.id, { user: 'alice', owner: true }, 'Withdrawn'),
        ]);
        if (revoked.kind === 'done') assert.equal(started, null, 'a revoked item never starts');
        else assert.deepEqual([revoked.kind, started?.item.id], ['gone', item.id]);
      }
    });

    it('an edit racing the start of its item: the turn runs the edited text exactly when the edit committed first', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const t = await busyThread();
        const item = queuedItem(await queue(t, 'before'));
        await storage().writer.finishRun(t.run, 'succeeded', null);
        const [started, edited] = await Promise.all([
          storage().writer.handOverTurn(t.run, LEASE),
          other.writer.editQueued(t.thread.id, item.id, { user: 'alice', owner: false }, 'after'),
        ]);
        assert.equal(started?.item.id, item.id);
        assert.equal(started?.item.text, edited.kind === 'done' ? 'after' : 'before');
        if (edited.kind !== 'done') assert.equal(edited.kind, 'gone');
      }
    });

    it('two instances handing over the same turn start its next directive once', async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const t = await busyThread();
        queuedItem(await queue(t, 'one'));
        queuedItem(await queue(t, 'two'));
        await storage().writer.finishRun(t.run, 'succeeded', null);
        const starts = (await Promise.all([storage().writer.handOverTurn(t.run, LEASE), other.writer.handOverTurn(t.run, LEASE)])).filter((s) => s !== null);
        assert.deepEqual(starts.map((s) => s.item.text), ['one'], 'started once, the first');
        assert.deepEqual(await texts(t.thread.id), ['two'], 'the second still waits');
      }
    });

    /** What starting a dequeued turn needs: the turn as its hand-over answered it. */
    const startable = (turn: DequeuedTurn | null) =>
      turn === null ? null : { thread: turn.thread.id, conversation: turn.conversation.id, run: turn.run, item: turn.item, message: turn.message, event: turn.event };

    it('a dequeued run keeps its prompt unsent until the one turn that holds it takes it; a directive\'s own run has none', async () => {
      const t = await busyThread();
      queuedItem(await queue(t, 'one'));
      const next = (await endTurn(t.run))!;
      for (const on of [storage(), other]) assert.deepEqual(startable(await on.writer.unsentTurn(next.run.id)), startable(next), 'kept with the turn, as the hand-over answered it');
      assert.equal(await storage().writer.takeUnsentPrompt(next.run.id, 'another-instance', '/elsewhere'), false, 'only the holder of its turn takes it');
      const takes = await Promise.all([storage().writer.takeUnsentPrompt(next.run.id, LEASE.holder, '/srv/b'), other.writer.takeUnsentPrompt(next.run.id, LEASE.holder, '/srv/b')]);
      assert.deepEqual(takes.sort(), [false, true], 'taken once');
      const runs = (await storage().conversations.runsPage(t.thread.id, next.run.conversation_id, { limit: 50, before: null }))!.items;
      assert.equal(runs.find((run) => run.id === next.run.id)?.directory, '/srv/b', 'the run is where the taking instance runs it, no longer where it was queued');
      const recorded = (await storage().conversations.modelMessagesPage(t.thread.id, next.run.id, { limit: 10, before: null }))!.items;
      assert.deepEqual(recorded.map((m) => [m.role, m.content]), [['user', 'one']], 'recorded as the run\'s prompt, once, as it was taken');
      assert.equal(await storage().writer.unsentTurn(next.run.id), null, 'taken: never started again');
      assert.equal(await storage().writer.takeUnsentPrompt(next.run.id, LEASE.holder, '/srv/b'), false);
      const plain = await busyThread();
      assert.equal(await storage().writer.unsentTurn(plain.run), null);
      assert.equal(await storage().writer.takeUnsentPrompt(plain.run, LEASE.holder, '/srv/b'), false);
    });

    it('an unsent prompt goes with its turn: handed over, released or ended, its run is never started again', async () => {
      const t = await busyThread();
      for (const text of ['one', 'two', 'three']) queuedItem(await queue(t, text));
      const one = (await endTurn(t.run))!;
      const two = (await endTurn(one.run.id))!;
      assert.equal(await storage().writer.unsentTurn(one.run.id), null, 'handed over');
      assert.equal(two.item.text, 'two');
      await storage().writer.finishRun(two.run.id, 'cancelled', null);
      assert.equal(await storage().writer.unsentTurn(two.run.id), null, 'ended');
      const three = (await storage().writer.handOverTurn(two.run.id, LEASE))!;
      assert.notEqual(await storage().writer.unsentTurn(three.run.id), null);
      await storage().writer.finishRun(three.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(three.run.id);
      assert.equal(await storage().writer.takeUnsentPrompt(three.run.id, LEASE.holder, '/srv/b'), false, 'released');
    });

    it('a sweeper that claims a lapsed dequeued turn finds its prompt unsent and takes it; its dead holder no longer can', async () => {
      const t = await busyThread();
      queuedItem(await queue(t, 'orphan'));
      await storage().writer.finishRun(t.run, 'succeeded', null);
      const next = (await storage().writer.handOverTurn(t.run, { holder: 'dead-instance', ms: 1 }))!;
      await new Promise((resolve) => setTimeout(resolve, 20)); // the 1 ms lease lapses (real time: a database's now() rules)
      const sweeper = { holder: 'sweeper', ms: 60_000 };
      // Other lapsed turns (the fixture world's, which have no lease) may be claimed first.
      let claimed = await other.writer.claimExpiredTurn(sweeper);
      while (claimed !== null && claimed.run.id !== next.run.id) claimed = await other.writer.claimExpiredTurn(sweeper);
      assert.equal(claimed?.run.id, next.run.id);
      assert.deepEqual(startable(await other.writer.unsentTurn(next.run.id)), startable(next));
      assert.equal(await storage().writer.takeUnsentPrompt(next.run.id, 'dead-instance', '/srv/b'), false);
      assert.equal(await other.writer.takeUnsentPrompt(next.run.id, sweeper.holder, '/srv/b'), true);
    });

    it('a queue left idle (its turn freed without a hand-over) is started by one sweeper, once; moves are refused while it waits', async () => {
      const t = await busyThread();
      const item = queuedItem(await queue(t, 'stranded'));
      await storage().writer.finishRun(t.run, 'succeeded', null);
      await storage().writer.releaseTurn(t.run);
      assert.deepEqual(await storage().writer.writeMove(summonOf(t)), { kind: 'busy', busy: { turnRunning: false, approvals: 0, questions: 0, queued: 1 } });
      // Other tests' threads may have idle queues too: sweep them all, and find this one started once.
      const started: DequeuedTurn[] = [];
      for (;;) {
        const found = (await Promise.all([storage().writer.startIdleQueue(LEASE), other.writer.startIdleQueue(LEASE)])).filter((s) => s !== null);
        if (found.length === 0) break;
        started.push(...found);
      }
      assert.deepEqual(started.filter((s) => s.thread.id === t.thread.id).map((s) => s.item.id), [item.id]);
      assert.deepEqual(await texts(t.thread.id), []);
      assert.equal((await storage().writer.runningTurn(t.thread.id))?.run_id, started.find((s) => s.thread.id === t.thread.id)?.run.id);
    });
  });
}
