// Issue 25: a directive sent while a turn ran was refused (409 `turn_running`); follow-ups are now queued
// (`when_busy: "queue"`), run one per turn in order, or run next after cancelling the turn (`"interrupt"`).
// Over HTTP with the demo agent (its `[wait]` holds a turn until it is cancelled), on memory, embedded PGlite
// and (with TEST_DATABASE_URL) PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { testId } from '../support/ids.ts';
import { fixtureWorld, F } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';
/** Bob's thread that alice is a member of, with an idle claude conversation. */
const SHARED = testId(7_000);
/** Another such thread, for message ids. */
const SHARED_IDS = testId(7_100);

const ofType = (events: readonly WireEvent[], type: string) => events.filter((e) => e.type === type);

for (const kind of storageKinds('queue')) {
  describe(`follow-ups while a turn runs: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    const sockets: LiveClient[] = [];
    before(async () => {
      opened = await kind.open();
      const fixture = fixtureWorld();
      const shared = (id: string, conversation: string) => ({
        id, key: null, channel: 'console', owner: 'bob', members: ['alice'], project: null, title: 'Shared, with a conversation',
        fork_of: null, fork_cutoff: null, messages: [],
        conversations: [{ id: conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      });
      const world = { ...fixture, threads: [...fixture.threads, shared(SHARED, testId(7_001)), shared(SHARED_IDS, testId(7_101))] };
      await opened.storage.importWorld(world);
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage });
    });
    after(async () => {
      for (const socket of sockets) socket.close();
      await service.close();
      await opened.close();
    });

    const send = (ref: string, body: Record<string, unknown>, headers = ALICE) =>
      service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers, body: JSON.stringify(body) });
    const live = async (ref: string, headers = ALICE): Promise<LiveClient> => {
      const socket = (await connectLive(service.port, { thread: ref, after: '0' }, { authorization: headers.authorization! })) as LiveClient;
      sockets.push(socket);
      return socket;
    };
    /** A new thread of alice's whose first turn holds (`[wait]`) until it is cancelled, with its socket. */
    const heldThread = async () => {
      const key = randomUUID();
      const socket = await live(key);
      const first = await send(key, { text: 'hold [wait]', model: 'claude:opus' });
      assert.equal(first.status, 202, first.text);
      await socket.until((e) => ofType(e, 'run_started').length === 1);
      return { id: first.json().thread_id as string, run: first.json().run_id as string, socket };
    };
    /** The prompt each run of the thread was given, in the order the runs started. */
    const prompts = async (threadId: string, runIds: readonly string[]) => {
      const texts = [];
      for (const run of runIds) {
        const page = (await service.ask({ path: `${P}/${threadId}/runs/${run}/messages`, headers: ALICE })).json();
        texts.push((page.items as { role: string; content: string }[]).find((m) => m.role === 'user')?.content);
      }
      return texts;
    };
    const cancel = (threadId: string) => service.ask({ method: 'POST', path: `${P}/${threadId}/cancel`, headers: ALICE });

    it('three directives queued during a turn run after it, in order, each in its own run', async () => {
      const t = await heldThread();
      const answers = [];
      for (const text of ['one', 'two', 'three']) {
        const res = await send(t.id, { text, when_busy: 'queue' });
        assert.equal(res.status, 202, res.text);
        answers.push(res.json());
      }
      assert.deepEqual(answers.map((a) => [a.thread_id, a.queued.position, 'run_id' in a]), [[t.id, 1, false], [t.id, 2, false], [t.id, 3, false]]);
      const listed = (await service.ask({ path: `${P}/${t.id}/queue`, headers: ALICE })).json();
      assert.deepEqual(listed.map((q: { id: string; text: string; author: string; position: number }) => [q.id, q.text, q.author, q.position]),
        answers.map((a, i) => [a.queued.id, ['one', 'two', 'three'][i], 'alice', i + 1]));
      assert.equal((await cancel(t.id)).status, 202);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 4);
      // Each queued item leaves the queue just before its run starts.
      const order = events.filter((e) => ['dequeued', 'run_started'].includes(e.type)).map((e) => `${e.type}:${String(e.data.run_id).slice(-4)}`);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(order, [`run_started:${runs[0]!.slice(-4)}`, ...runs.slice(1).flatMap((r) => [`dequeued:${r.slice(-4)}`, `run_started:${r.slice(-4)}`])]);
      assert.deepEqual(ofType(events, 'dequeued').map((e) => e.data.id), answers.map((a) => a.queued.id));
      assert.equal(new Set(runs).size, 4);
      assert.deepEqual(await prompts(t.id, runs), ['hold [wait]', 'one', 'two', 'three']);
      assert.deepEqual((await service.ask({ path: `${P}/${t.id}/queue`, headers: ALICE })).json(), []);
    });

    it('an edited item runs its new text; a withdrawn one never runs, and the ledger says so', async () => {
      const t = await heldThread();
      const a = (await send(t.id, { text: 'a', when_busy: 'queue' })).json().queued.id as string;
      const b = (await send(t.id, { text: 'b', when_busy: 'queue' })).json().queued.id as string;
      const edited = await service.ask({ method: 'PATCH', path: `${P}/${t.id}/queue/${a}`, headers: ALICE, body: JSON.stringify({ text: 'a, edited' }) });
      assert.equal(edited.status, 200, edited.text);
      assert.deepEqual([edited.json().id, edited.json().text, edited.json().position], [a, 'a, edited', 1]);
      const withdrawn = await service.ask({ method: 'DELETE', path: `${P}/${t.id}/queue/${b}`, headers: ALICE });
      assert.equal(withdrawn.status, 204);
      const ledger = (await service.ask({ path: `${P}/${t.id}/messages`, headers: ALICE })).json().items as { role: string; text: string }[];
      assert.equal(ledger[0]!.role, 'system');
      assert.match(ledger[0]!.text, /withdrew a queued message before it ran: "b"/);
      assert.ok(ledger.some((m) => m.text === 'a, edited'), "the item's ledger message follows its edit");
      await cancel(t.id);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(t.id, runs), ['hold [wait]', 'a, edited']);
      // Started, or withdrawn: 409, whoever asks.
      const late = await service.ask({ method: 'PATCH', path: `${P}/${t.id}/queue/${a}`, headers: ALICE, body: JSON.stringify({ text: 'late' }) });
      assert.deepEqual([late.status, late.json().code], [409, 'queue_item_gone']);
      const again = await service.ask({ method: 'DELETE', path: `${P}/${t.id}/queue/${b}`, headers: ALICE });
      assert.deepEqual([again.status, again.json().code], [409, 'queue_item_gone']);
      assert.equal(ofType(t.socket.events, 'run_started').length, 2, 'b never ran');
    });

    it('interrupt cancels the running turn and runs first, ahead of the queue', async () => {
      const t = await heldThread();
      await send(t.id, { text: 'later', when_busy: 'queue' });
      const now = await send(t.id, { text: 'now', when_busy: 'interrupt' });
      assert.equal(now.status, 202, now.text);
      assert.equal(now.json().queued.position, 1);
      const events = await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 3);
      assert.deepEqual(ofType(events, 'run_cancelled').map((e) => e.data.run_id), [t.run], 'the held turn was cancelled');
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(t.id, runs), ['hold [wait]', 'now', 'later']);
    });

    it('interrupt while the turn waits on an approval: the ask is answered cancelled as POST /cancel does, then the interrupt runs, then the queue in order', async () => {
      const key = randomUUID();
      const socket = await live(key);
      const first = await send(key, { text: 'ask first [approval]', model: 'claude:opus' });
      assert.equal(first.status, 202, first.text);
      const { thread_id: threadId, run_id: asking, conversation_id: conversationId } = first.json();
      await socket.until((e) => ofType(e, 'approval_requested').length === 1);
      const pending = (await service.ask({ path: `${P}/${threadId}/pending`, headers: ALICE })).json();
      assert.deepEqual(pending.map((p: { run_id: string }) => p.run_id), [asking]);
      const queued = [];
      for (const text of ['later 1', 'later 2']) queued.push((await send(threadId, { text, when_busy: 'queue' })).json().queued.id as string);
      const now = await send(threadId, { text: 'now', when_busy: 'interrupt' });
      assert.equal(now.status, 202, now.text);
      assert.equal(now.json().queued.position, 1);
      const events = await socket.until((e) => ofType(e, 'reflex_asleep').length === 4);
      // The agent was told its ask was cancelled, and the turn ended cancelled, as a user's cancel ends it.
      assert.ok(events.some((e) => e.type === 'message' && e.data.run_id === asking && String(e.data.delta ?? '').includes('Permission: cancelled')), 'the ask was answered cancelled');
      assert.deepEqual(ofType(events, 'run_cancelled').map((e) => [e.data.run_id, e.data.code]), [[asking, 'cancelled']]);
      assert.deepEqual((await service.ask({ path: `${P}/${threadId}/pending`, headers: ALICE })).json(), [], 'the ask left /pending');
      const listed = (await service.ask({ path: `${P}/${threadId}/conversations/${conversationId}/runs`, headers: ALICE })).json().items as { id: string; status: string; error: string | null }[];
      assert.deepEqual(listed.find((r) => r.id === asking), { ...listed.find((r) => r.id === asking), status: 'cancelled', error: 'cancelled: cancelled by a user' });
      // The interrupting directive first, then those queued before it, in order; each once.
      assert.deepEqual(ofType(events, 'dequeued').map((e) => e.data.id), [now.json().queued.id, ...queued]);
      const runs = ofType(events, 'run_started').map((e) => e.data.run_id as string);
      assert.deepEqual(await prompts(threadId, runs), ['ask first [approval]', 'now', 'later 1', 'later 2']);
      assert.deepEqual(ofType(events, 'run_finished').map((e) => e.data.run_id), runs.slice(1));
      assert.equal(ofType(events, 'approval_requested').length, 1);
    });

    it('a directive without when_busy is still 409 turn_running; past 20 queued is 429 queue_full; moves are 409 queue_not_empty', async () => {
      const t = await heldThread();
      const plain = await send(t.id, { text: 'not now' });
      assert.deepEqual([plain.status, plain.json().code], [409, 'turn_running']);
      const ids = [];
      for (let i = 0; i < 20; i++) ids.push((await send(t.id, { text: `item ${i}`, when_busy: 'queue' })).json().queued.id as string);
      const full = await send(t.id, { text: 'one too many', when_busy: 'queue' });
      assert.deepEqual([full.status, full.json().code], [429, 'queue_full']);
      const summon = await service.ask({ method: 'POST', path: `${P}/${t.id}/summon`, headers: ALICE, body: JSON.stringify({ route: 'codex', brief: 'x' }) });
      assert.deepEqual([summon.status, summon.json().code], [409, 'queue_not_empty']);
      const teleport = await service.ask({
        method: 'POST', path: `${P}/${t.id}/teleport`, headers: ALICE,
        body: JSON.stringify({ destination: { channel: 'team-chat', id: 'general' }, new_thread: true, prompt: null }),
      });
      assert.deepEqual([teleport.status, teleport.json().code], [409, 'queue_not_empty']);
      for (const id of ids) assert.equal((await service.ask({ method: 'DELETE', path: `${P}/${t.id}/queue/${id}`, headers: ALICE })).status, 204);
      await cancel(t.id);
      await t.socket.until((e) => ofType(e, 'reflex_asleep').length === 1);
    });

    it('members may queue; only the author or the owner may change an item; another user reads no queue', async () => {
      const socket = await live(SHARED, BOB);
      const held = await send(SHARED, { text: 'hold [wait]' }, BOB);
      assert.equal(held.status, 202, held.text);
      await socket.until((e) => ofType(e, 'run_started').length === 1);
      const refused = await send(SHARED, { text: 'from a member' });
      assert.deepEqual([refused.status, refused.json().code], [403, 'not_thread_owner'], 'a member does not start turns');
      const mine = (await send(SHARED, { text: 'from a member', when_busy: 'queue' })).json().queued.id as string;
      const bobs = (await send(SHARED, { text: 'from the owner', when_busy: 'queue' }, BOB)).json().queued.id as string;
      const notMine = await service.ask({ method: 'DELETE', path: `${P}/${SHARED}/queue/${bobs}`, headers: ALICE });
      assert.deepEqual([notMine.status, notMine.json().code], [403, 'not_queue_item_author']);
      const byOwner = await service.ask({ method: 'PATCH', path: `${P}/${SHARED}/queue/${mine}`, headers: BOB, body: JSON.stringify({ text: 'owner edit' }) });
      assert.equal(byOwner.status, 200);
      assert.equal(byOwner.json().author, 'alice');
      assert.equal((await service.ask({ path: `${P}/${F.bobThread}/queue`, headers: ALICE })).status, 404);
      assert.equal((await service.ask({ method: 'DELETE', path: `${P}/${F.bobThread}/queue/${mine}`, headers: ALICE })).status, 404);
      const blank = await service.ask({ method: 'PATCH', path: `${P}/${SHARED}/queue/${mine}`, headers: ALICE, body: JSON.stringify({ text: ' ' }) });
      assert.equal(blank.status, 422);
      await service.ask({ method: 'POST', path: `${P}/${SHARED}/cancel`, headers: BOB });
      const events = await socket.until((e) => ofType(e, 'reflex_asleep').length === 3);
      assert.deepEqual(ofType(events, 'queued').map((e) => e.data.text), ['from a member', 'from the owner', 'owner edit']);
    });

    it("a member reusing the owner's message_id is 409 message_id_taken, told nothing of the owner's answer; the owner's retry is still idempotent", async () => {
      const socket = await live(SHARED_IDS, BOB);
      const held = await send(SHARED_IDS, { text: 'hold [wait]', message_id: 'client-7' }, BOB);
      assert.equal(held.status, 202, held.text);
      await socket.until((e) => ofType(e, 'run_started').length === 1);
      const reused = await send(SHARED_IDS, { text: "alice's own words", message_id: 'client-7', when_busy: 'queue' });
      assert.equal(reused.status, 409, reused.text);
      assert.equal(reused.headers['content-type'], 'application/problem+json');
      assert.equal(reused.json().code, 'message_id_taken');
      assert.ok(!reused.text.includes(held.json().run_id), "bob's run is not named");
      assert.deepEqual((await service.ask({ path: `${P}/${SHARED_IDS}/queue`, headers: ALICE })).json(), [], 'nothing was queued');
      const retried = await send(SHARED_IDS, { text: 'hold [wait]', message_id: 'client-7' }, BOB);
      assert.deepEqual([retried.status, retried.json()], [202, held.json()], "the owner's retry answers the first answer");
      // Her own id, the same text: queued as any.
      const own = await send(SHARED_IDS, { text: "alice's own words", message_id: 'client-8', when_busy: 'queue' });
      assert.equal(own.status, 202, own.text);
      await service.ask({ method: 'POST', path: `${P}/${SHARED_IDS}/cancel`, headers: BOB });
      await socket.until((e) => ofType(e, 'reflex_asleep').length === 2);
    });
  });
}
