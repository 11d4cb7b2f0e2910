import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { MoveWrite } from '../../ports/move-writes.ts';
import { waitFor } from '../support/wait-for.ts';
import type { WriterSuite } from './storage-writer.contract.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A thread as the suite created it: its id and its (first) conversation's. */
type Source = { readonly thread: { readonly id: string }; readonly conversation: { readonly id: string } };

/** A summon of `t` to codex, with its brief as the first turn under `lease`. */
export const summonOf = (t: Source, lease = { holder: 'h', ms: 60_000 }): MoveWrite => ({
  source_thread_id: t.thread.id,
  moving: null,
  replaces: t.conversation.id,
  landing: null,
  conversation: { id: uuidv7(), agent: 'codex', model: null, permission_mode: 'auto', effort: null, address: null },
  ledger: 'Handed over to codex',
  landing_ledger: null,
  delivery: null,
  gateway: { operation: 'summon' },
  turn: { text: 'The brief', directory: '/srv/acme', lease },
});

/** A teleport of `t`'s conversation to a new thread in #general on team-chat, with no first turn. */
export const teleportOf = (t: Source) => {
  const landing = { id: uuidv7(), owner: 'alice', members: ['bob'], channel: 'team-chat', project: 'acme-web', title: 'Moved' };
  const deliveryId = uuidv7();
  const address = { channel: 'team-chat', id: `general/${deliveryId}` };
  const conversation = { id: uuidv7(), agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address };
  const write: MoveWrite = {
    source_thread_id: t.thread.id, moving: t.conversation.id, replaces: null, landing: { ...landing, conversation }, conversation,
    ledger: 'Moved away', landing_ledger: 'Moved here', gateway: { operation: 'teleport' }, turn: null,
    delivery: { id: deliveryId, channel: 'team-chat', place: 'general', new_thread: true, address, title: 'Moved', text: 'Moved here from console' },
  };
  return { landing, conversation, write };
};

/** The storage writer contract, continued: turns as leases, the directive's event, stored answers. */
export function turnLeaseTests({ storage, newThread, directive, runs, conversationOf }: WriterSuite): void {
  describe('TurnLeases: turns are leases', () => {
    it("a directive stores its message event with the thread's next seq, then run_started, and the prompt as the run's model message, in the same write", async () => {
      const t = await newThread();
      await storage().events.append(t.thread.id, 'gateway', { before: true });
      const started = await storage().writer.writeDirective(directive(t, { text: 'Hello' }));
      assert.ok(started.kind === 'started');
      assert.equal(started.event.seq, 2);
      assert.equal(started.event.type, 'message');
      assert.deepEqual(started.event.data, { run_id: started.run.id, message: started.message });
      assert.equal(started.runStarted.seq, 3);
      assert.equal(started.runStarted.type, 'run_started');
      assert.deepEqual(started.runStarted.data, { run_id: started.run.id, conversation_id: t.conversation.id });
      assert.deepEqual(await storage().events.since(t.thread.id, 1, 10), [started.event, started.runStarted]);
      const prompt = (await storage().conversations.modelMessagesPage(t.thread.id, started.run.id, { limit: 10, before: null }))?.items;
      assert.deepEqual(prompt?.map(({ role, content }) => ({ role, content })), [{ role: 'user', content: 'Hello' }]);
      assert.equal(started.sessionId, null, 'no session yet');
      const busy = await storage().writer.writeDirective(directive(t));
      assert.equal(busy.kind, 'busy');
      assert.equal((await storage().events.since(t.thread.id, 0, 10)).length, 3, 'a busy directive stores no event');
    });

    it("a directive answers the conversation's session, read in its write", async () => {
      const t = await newThread();
      await storage().writer.setSession(t.conversation.id, 'session-7');
      const started = await storage().writer.writeDirective(directive(t));
      assert.ok(started.kind === 'started');
      assert.equal(started.sessionId, 'session-7');
    });

    it('the running turn of a thread names its run and holder, until released', async () => {
      const t = await newThread();
      assert.equal(await storage().writer.runningTurn(t.thread.id), null);
      const started = await storage().writer.writeDirective(directive(t, { lease: { holder: 'instance-a', ms: 60_000 } }));
      assert.ok(started.kind === 'started');
      assert.deepEqual(await storage().writer.runningTurn(t.thread.id), { run_id: started.run.id, conversation_id: t.conversation.id, holder: 'instance-a' });
      await storage().writer.finishRun(started.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(started.run.id);
      assert.equal(await storage().writer.runningTurn(t.thread.id), null);
    });

    it('a holder renews only its own turns; a lapsed turn is claimed once, by one sweeper', async () => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t, { lease: { holder: 'dead', ms: 1 } }));
      assert.ok(started.kind === 'started');
      assert.deepEqual(await storage().writer.renewTurns('someone-else', [started.run.id], 60_000), []);
      await sleep(20); // the 1 ms lease lapses (real time: a database's now() rules)
      const claims = await Promise.all([
        storage().writer.claimExpiredTurn({ holder: 'sweeper-1', ms: 60_000 }),
        storage().writer.claimExpiredTurn({ holder: 'sweeper-2', ms: 60_000 }),
      ]);
      const mine = claims.filter((claim) => claim?.run.id === started.run.id);
      assert.equal(mine.length, 1, 'claimed exactly once');
      assert.deepEqual(mine[0], { thread_id: t.thread.id, run: started.run });
      // Claimed, it is not lapsed any more: no other sweeper finds it, and the dead holder lost it.
      assert.equal((await storage().writer.claimExpiredTurn({ holder: 'sweeper-3', ms: 60_000 }))?.run.id === started.run.id, false);
      assert.deepEqual(await storage().writer.renewTurns('dead', [started.run.id], 60_000), []);
      assert.equal((await conversationOf(t)).turn_running, true);
      await storage().writer.finishRun(started.run.id, 'failed', 'turn_lease_expired: swept');
      await storage().writer.releaseTurn(started.run.id);
      assert.equal((await conversationOf(t)).turn_running, false);
      assert.equal((await runs(t))[0]!.status, 'failed');
    });

    it('a renewed lease does not lapse', async () => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t, { lease: { holder: 'alive', ms: 1 } }));
      assert.ok(started.kind === 'started');
      assert.deepEqual(await storage().writer.renewTurns('alive', [started.run.id], 60_000), [started.run.id]);
      await sleep(20); // past the first 1 ms lease: a window in which the renewed one must not lapse
      for (let claim = await storage().writer.claimExpiredTurn({ holder: 's', ms: 60_000 }); claim !== null;
        claim = await storage().writer.claimExpiredTurn({ holder: 's', ms: 60_000 })) {
        assert.notEqual(claim.run.id, started.run.id);
        await storage().writer.releaseTurn(claim.run.id);
      }
    });

    it('a released turn takes a new directive; releasing another run leaves the turn alone', async () => {
      const t = await newThread();
      const first = await storage().writer.writeDirective(directive(t));
      assert.ok(first.kind === 'started');
      await storage().writer.releaseTurn('0190a000-0000-7000-8000-000000000000');
      assert.equal((await storage().writer.writeDirective(directive(t))).kind, 'busy');
      await storage().writer.finishRun(first.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(first.run.id);
      assert.equal((await storage().writer.writeDirective(directive(t))).kind, 'started');
    });

    it('answers are stored until their run ends, so a waiter that missed the signal finds them', async () => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t));
      assert.ok(started.kind === 'started');
      const ask = await storage().writer.addPending({
        kind: 'approval', conversation_id: t.conversation.id, run_id: started.run.id, title: 'Write?', options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }], tool_call: null,
      });
      assert.deepEqual(await storage().writer.pendingAnswers([ask.id]), []);
      assert.deepEqual(await storage().writer.answerPending(t.thread.id, [{ id: ask.id, option: 'allow' }]), { ok: true });
      assert.deepEqual(await storage().writer.pendingAnswers([ask.id, 'not-a-uuid']), [{ id: ask.id, option: 'allow' }]);
      await storage().writer.finishRun(started.run.id, 'succeeded', null);
      assert.deepEqual(await storage().writer.pendingAnswers([ask.id]), []);
    });
  });

  describe('MoveWrites: moves are written whole (and DeliveryOutbox: what a move stores for a channel)', () => {
    const ledger = async (threadId: string) => (await storage().ledger.page([{ thread_id: threadId, upTo: null }], { limit: 200, before: null })).items;
    it('a summon writes the conversation, the ledger line, the gateway and the first turn with its event', async () => {
      const t = await newThread();
      const write = summonOf(t);
      const outcome = await storage().writer.writeMove(write);
      assert.ok(outcome.kind === 'moved');
      assert.equal(outcome.thread.id, t.thread.id);
      assert.equal(outcome.conversation.id, write.conversation.id);
      assert.equal(outcome.conversation.turn_running, true);
      assert.deepEqual(outcome.conversation.address, { channel: 'console', id: t.thread.id }, 'no address: the thread itself');
      assert.deepEqual(outcome.events.map((e) => [e.seq, e.type, e.thread_id]), [[1, 'gateway', t.thread.id], [2, 'message', t.thread.id]]);
      assert.deepEqual(await storage().events.since(t.thread.id, 0, 10), outcome.events);
      assert.deepEqual((await ledger(t.thread.id)).map((m) => [m.role, m.text]), [['user', 'The brief'], ['system', 'Handed over to codex']]);
      assert.deepEqual((await storage().writer.runningTurn(t.thread.id))?.run_id, outcome.run?.id);
      assert.equal(outcome.run?.status, 'running');
    });

    /** Takes every delivery an earlier case left in the outbox: a case then claims its own alone. */
    const drainOutbox = async () => {
      for (const d of await storage().outbox.claimDue('drain', 60_000, 1_000)) await storage().outbox.delivered(d.id);
    };
    it('a teleport moves the conversation: the landing thread forks the source at its latest message, the session goes along, a delivery waits in the outbox', async () => {
      await drainOutbox();
      const t = await newThread();
      const first = await storage().writer.writeDirective(directive(t, { text: 'Before the move' }));
      assert.ok(first.kind === 'started');
      await storage().writer.finishRun(first.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(first.run.id);
      const reply = await storage().writer.appendMessage(t.thread.id, { role: 'assistant', text: 'Done before', artifact_id: null });
      await storage().writer.setSession(t.conversation.id, 'session-1');
      const { landing, conversation, write } = teleportOf(t);
      const outcome = await storage().writer.writeMove(write);
      assert.ok(outcome.kind === 'moved');
      assert.equal(outcome.run, null);
      const row = (await storage().threads.findAccessible('alice', landing.id))?.row;
      assert.equal(row?.channel, 'team-chat');
      assert.equal(row?.fork_of, t.thread.id);
      assert.equal(row?.fork_cutoff, reply.id, 'cut at the latest message, before the move line');
      assert.deepEqual(outcome.events.map((e) => [e.type, e.thread_id]), [['gateway', t.thread.id], ['gateway', landing.id]]);
      assert.deepEqual((await storage().conversations.listByThread(landing.id)).map((c) => [c.id, c.address, c.moved_to]), [[conversation.id, conversation.address, null]]);
      const moved = (await storage().conversations.listByThread(t.thread.id))[0]!;
      assert.deepEqual(moved.moved_to, { thread_id: landing.id, conversation_id: conversation.id, address: conversation.address });
      assert.deepEqual(moved.address, conversation.address, "the moved conversation's new address");
      // One conversation lives at the address: the landing one, not the source that left by it.
      assert.equal((await storage().conversations.livingAt(conversation.address!))?.id, conversation.id);
      assert.equal(await storage().conversations.livingAt({ channel: 'team-chat', id: 'nowhere' }), null);
      assert.equal(await storage().writer.sessionOf(conversation.id), 'session-1');
      assert.deepEqual((await ledger(t.thread.id)).map((m) => [m.role, m.text]), [['system', 'Moved away'], ['assistant', 'Done before'], ['user', 'Before the move']]);
      assert.deepEqual((await ledger(landing.id)).map((m) => [m.role, m.text]), [['system', 'Moved here']]);
      const claimed = await storage().outbox.claimDue('dispatcher', 60_000, 10);
      assert.deepEqual(claimed, [{ ...write.delivery!, ask: null, to: null, attempts: 0, handed_before: false }], 'it asks nothing, and is for everyone there');
    });

    it('AddressLanding: a teleport landed at the address the platform gave lives there, moved_to names it, its waiting posts go there; landed again, nothing changes', async () => {
      await drainOutbox();
      const t = await newThread();
      const { landing, conversation, write } = teleportOf(t);
      assert.equal((await storage().writer.writeMove(write)).kind, 'moved');
      const from = conversation.address;
      const to = { channel: 'team-chat', id: `general/landed-${uuidv7()}` };
      const reply = { id: uuidv7(), channel: 'team-chat', place: from.id, new_thread: false, address: from, title: '', text: 'The first reply' };
      const elsewhere = { ...reply, id: uuidv7(), place: 'general/other', address: { channel: 'team-chat', id: 'general/other' } };
      await storage().outbox.add(reply);
      await storage().outbox.add(elsewhere);
      await storage().writer.landAt(from, to);
      assert.equal(await storage().conversations.livingAt(from), null, 'nothing lives at the provisional address');
      assert.equal((await storage().conversations.livingAt(to))?.id, conversation.id);
      const conversations = async () => [...await storage().conversations.listByThread(t.thread.id), ...await storage().conversations.listByThread(landing.id)];
      const source = (await storage().conversations.listByThread(t.thread.id))[0]!;
      assert.deepEqual([source.address, source.moved_to], [to, { thread_id: landing.id, conversation_id: conversation.id, address: to }], 'the source says where it went');
      const landed = await conversations();
      await storage().writer.landAt(from, to);
      assert.deepEqual(await conversations(), landed, 'landed again: nothing is at the provisional address any more');
      const claimed = await storage().outbox.claimDue('d', 60_000, 10);
      assert.deepEqual(claimed.map((d) => [d.id, d.address, d.place]), [
        [write.delivery!.id, to, to.id], [reply.id, to, to.id], [elsewhere.id, elsewhere.address, elsewhere.place],
      ], 'the posts waiting there go there; another place\'s stay');
    });

    it('a post added to the outbox is due at once, and added twice it is there once', async () => {
      await drainOutbox();
      const post = { id: uuidv7(), channel: 'team-chat', place: 'general/t1', new_thread: false, address: { channel: 'team-chat', id: 'general/t1' }, title: '', text: 'The reply' };
      await storage().outbox.add(post);
      await storage().outbox.add({ ...post, text: 'changed' });
      assert.deepEqual(await storage().outbox.claimDue('d', 60_000, 10), [{ ...post, ask: null, to: null, attempts: 0, handed_before: false }]);
    });

    it('a post added with an ask and a recipient is claimed with both; one with them null is claimed with them null', async () => {
      await drainOutbox();
      const ask = {
        pending_id: uuidv7(), kind: 'approval' as const, title: 'Run "rm -rf build"? ünïcode 🚀',
        options: [{ id: 'allow', name: 'Allow' }, { id: 'reject', name: "Don't" }],
      };
      const address = { channel: 'team-chat', id: 'general/t2' };
      const asking = { id: uuidv7(), channel: 'team-chat', place: 'general/t2', new_thread: false, address, title: '', text: '1. Allow\n2. Don\'t', ask, to: 'bob@chat.example' };
      const plain = { id: uuidv7(), channel: 'team-chat', place: 'general/t2', new_thread: false, address, title: '', text: 'Nothing asked', ask: null, to: null };
      await storage().outbox.add(asking);
      await storage().outbox.add(plain);
      assert.deepEqual(await storage().outbox.claimDue('d', 60_000, 10), [{ ...asking, attempts: 0, handed_before: false }, { ...plain, attempts: 0, handed_before: false }]);
    });

    it("a move's delivery keeps its ask and its recipient", async () => {
      await drainOutbox();
      const t = await newThread();
      const { write } = teleportOf(t);
      const ask = { pending_id: uuidv7(), kind: 'question' as const, title: 'Which?', options: [{ id: 'a', name: 'A' }] };
      const delivery = { ...write.delivery!, ask, to: 'alice@chat.example' };
      assert.equal((await storage().writer.writeMove({ ...write, delivery })).kind, 'moved');
      assert.deepEqual(await storage().outbox.claimDue('d', 60_000, 10), [{ ...delivery, attempts: 0, handed_before: false }]);
    });

    it('a thread a chat message opened lives on its channel, its conversation at the address it opened', async () => {
      const at = { channel: 'team-chat', id: `general/opened-${uuidv7()}` };
      const input = {
        owner: 'alice', key: `team-chat:${at.id}`, channel: 'team-chat', project: null, title: 'Opened from chat',
        conversation: { agent: 'claude', model: null, permission_mode: null, effort: null, address: at },
      };
      const { thread, conversation } = await storage().writer.createConsoleThread(input);
      assert.equal(thread.channel, 'team-chat');
      assert.deepEqual(conversation.address, at);
      assert.equal((await storage().conversations.livingAt(at))?.id, conversation.id);
      // The same message again (a repeat, another instance): the same thread.
      const again = await storage().writer.createConsoleThread(input);
      assert.deepEqual([again.thread.id, again.conversation.id], [thread.id, conversation.id]);
    });

    it('a moved conversation moves and continues no more from its source: later moves and directives there write nothing', async () => {
      await drainOutbox();
      const t = await newThread();
      const { write } = teleportOf(t);
      assert.equal((await storage().writer.writeMove(write)).kind, 'moved');
      const events = await storage().events.since(t.thread.id, 0, 10);
      const again = teleportOf(t);
      const outcome = await storage().writer.writeMove(again.write);
      assert.equal(outcome.kind, 'moved_away');
      assert.ok(outcome.kind === 'moved_away' && outcome.moved_to.thread_id === write.landing!.id);
      assert.equal((await storage().writer.writeMove(summonOf(t))).kind, 'moved_away');
      const directed = await storage().writer.writeDirective(directive(t));
      assert.equal(directed.kind, 'moved_away');
      assert.deepEqual(await storage().events.since(t.thread.id, 0, 10), events);
      assert.equal(await storage().threads.exists(again.write.landing!.id), false);
      assert.deepEqual((await storage().outbox.claimDue('d', 60_000, 10)).map((d) => d.id), [write.delivery!.id]);
    });

    it('the landing thread is readable by the mover it names as a member; a move whose conversation changed, or onto an occupied place, writes nothing', async () => {
      const t = await newThread();
      const { landing, write } = teleportOf(t);
      assert.equal((await storage().writer.writeMove(write)).kind, 'moved');
      assert.equal((await storage().threads.findRow('bob', landing.id))?.id, landing.id, 'the member reads it');
      // Another thread's conversation onto the address the first now lives at: occupied.
      const other = await newThread();
      const onto = teleportOf(other);
      const occupied = { ...onto.write, conversation: { ...onto.write.conversation, address: write.conversation.address }, landing: { ...onto.write.landing!, conversation: { ...onto.write.conversation, address: write.conversation.address } } };
      assert.deepEqual(await storage().writer.writeMove(occupied), { kind: 'occupied' });
      // A summon came first: the conversation asked to move is no longer the latest.
      assert.equal((await storage().writer.writeMove(summonOf(other))).kind, 'moved');
      const summoned = await storage().writer.runningTurn(other.thread.id);
      await storage().writer.finishRun(summoned!.run_id, 'succeeded', null);
      await storage().writer.releaseTurn(summoned!.run_id);
      assert.deepEqual(await storage().writer.writeMove(teleportOf(other).write), { kind: 'changed' });
      assert.equal(await storage().threads.exists(onto.write.landing!.id), false);
    });

    it('the outbox: a claim is one holder\'s until it lapses; a refused delivery comes back later with its attempt counted; a taken one is gone', async () => {
      await drainOutbox();
      const t = await newThread();
      const { write } = teleportOf(t);
      assert.equal((await storage().writer.writeMove(write)).kind, 'moved');
      const id = write.delivery!.id;
      assert.deepEqual((await storage().outbox.claimDue('a', 60_000, 10)).map((d) => [d.id, d.handed_before]), [[id, false]], 'handed over for the first time');
      assert.deepEqual(await storage().outbox.claimDue('b', 60_000, 10), [], 'claimed by a');
      await storage().outbox.retryLater(id, 0);
      const retried = await storage().outbox.claimDue('b', 60, 10);
      assert.deepEqual(retried.map((d) => [d.id, d.attempts, d.handed_before]), [[id, 1, true]], 'refused once: a channel may hold its post');
      // Asked again until b's 60 ms claim has lapsed (a claim that finds nothing due changes nothing).
      let lapsed: { id: string; handed_before: boolean }[] = [];
      await waitFor(async () => (lapsed = await storage().outbox.claimDue('c', 60_000, 10)).length > 0, { what: "b's claim to lapse" });
      assert.deepEqual(lapsed.map((d) => [d.id, d.handed_before]), [[id, true]], "b's claim lapsed: b may have posted it");
      await storage().outbox.retryLater(id, 60_000);
      assert.deepEqual(await storage().outbox.claimDue('d', 60_000, 10), [], 'not due yet');
      await storage().outbox.delivered(id);
      await storage().outbox.retryLater(id, 0);
      assert.deepEqual(await storage().outbox.claimDue('e', 60_000, 10), [], 'taken: nothing is kept');
      // A holder that died mid-way (its claim lapsed, nothing put back): the next holder is told it may have posted.
      const fresh = { ...write.delivery!, id: uuidv7() };
      await storage().outbox.add(fresh);
      assert.deepEqual((await storage().outbox.claimDue('f', 60, 10)).map((d) => [d.id, d.handed_before]), [[fresh.id, false]]);
      let again: { id: string; attempts: number; handed_before: boolean }[] = [];
      await waitFor(async () => (again = await storage().outbox.claimDue('g', 60_000, 10)).length > 0, { what: "f's claim to lapse" });
      assert.deepEqual(again.map((d) => [d.id, d.attempts, d.handed_before]), [[fresh.id, 0, true]]);
      await storage().outbox.delivered(fresh.id);
    });

    it('a busy source writes nothing: a turn running, or an item pending', async () => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t));
      assert.ok(started.kind === 'started');
      const before = { events: await storage().events.since(t.thread.id, 0, 10), ledger: await ledger(t.thread.id) };
      const write = summonOf(t);
      assert.deepEqual(await storage().writer.writeMove(write), { kind: 'busy', busy: { turnRunning: true, approvals: 0, questions: 0, queued: 0 } });
      await storage().writer.finishRun(started.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(started.run.id);
      await storage().writer.addPending({ kind: 'question', conversation_id: t.conversation.id, run_id: null, title: 'q', options: [], tool_call: null });
      assert.deepEqual(await storage().writer.writeMove(summonOf(t)), { kind: 'busy', busy: { turnRunning: false, approvals: 0, questions: 1, queued: 0 } });
      assert.deepEqual(await storage().events.since(t.thread.id, 0, 10), before.events);
      assert.deepEqual(await ledger(t.thread.id), before.ledger);
      assert.deepEqual((await storage().conversations.listByThread(t.thread.id)).map((c) => c.id), [t.conversation.id]);
    });

    it('two concurrent summons of one idle thread: one moves, the other is busy', async () => {
      const t = await newThread();
      const outcomes = await Promise.all([storage().writer.writeMove(summonOf(t)), storage().writer.writeMove(summonOf(t))]);
      assert.deepEqual(outcomes.map((o) => o.kind).sort(), ['busy', 'moved']);
      assert.equal((await storage().conversations.listByThread(t.thread.id)).length, 2);
      assert.equal((await storage().events.since(t.thread.id, 0, 10)).length, 2);
    });
  });
}
