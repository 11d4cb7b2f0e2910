// Fork from a message (issue 39, contract section 11), over HTTP on memory storage with the bundled demo
// agent: a reader forks someone else's thread into a thread of their own that sees the ledger up to the
// message, forks of forks honour every cutoff on the chain, a fork with text runs it as its first
// directive in a fresh agent session briefed with the history up to the cutoff, and the refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import { fixtureWorld, F } from '../support/fixture-world.ts';
import { idleThread } from '../support/http.ts';
import { testId } from '../support/ids.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;
/** What the demo agent streamed in these events. */
const saidIn = (events: readonly WireEvent[]) => events.filter((e) => e.type === 'message' && typeof e.data.delta === 'string').map((e) => e.data.delta).join('');

/** Alice's idle console thread that bob is a member of: four messages, one claude conversation. */
const SRC = { thread: testId(30_000), msgs: [testId(30_001), testId(30_002), testId(30_003), testId(30_004)], conversation: testId(30_010) };

describe('fork from a message', () => {
  let service: TestService;
  before(async () => {
    const storage = createMemoryStorage();
    const world = fixtureWorld();
    await storage.importWorld({
      ...world,
      threads: [...world.threads, {
        id: SRC.thread, key: null, channel: 'console', owner: 'alice', members: ['bob'], project: 'acme-web', title: 'Plan the release', fork_of: null, fork_cutoff: null,
        messages: SRC.msgs.map((id, i) => ({ id, role: i % 2 === 0 ? 'user' : 'assistant', text: `src ${i}`, artifact_id: null })),
        conversations: [{ id: SRC.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
      }],
    });
    service = await startService({}, { storage });
    await service.knowOffers();
  });
  after(() => service.close());

  const get = (path: string, headers = BOB) => service.ask({ path, headers });
  const post = (path: string, body: unknown, headers = BOB) => service.ask({ method: 'POST', path, headers, body: JSON.stringify(body) });
  /** A thread's ledger as `headers`' user reads it, oldest first, as `role: text`. */
  const texts = async (thread: string, headers = BOB): Promise<string[]> =>
    (await get(`${P}/${thread}/messages?limit=200`, headers)).json().items.map((m: { role: string; text: string }) => `${m.role}: ${m.text}`).reverse();
  const fork = async (thread: string, body: Record<string, unknown>): Promise<string> => {
    const res = await post(`${P}/${thread}/fork`, body);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json().key, null);
    return res.json().thread_id as string;
  };

  it("a reader forks at a message: a console thread of their own that sees the ledger up to it", async () => {
    const res = await post(`${P}/${SRC.thread}/fork`, { message_id: SRC.msgs[1] });
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.json()).sort(), ['key', 'thread_id']);
    const id = res.json().thread_id as string;
    const row = (await get(`${P}/${id}`)).json();
    assert.equal(row.channel, 'console');
    assert.equal(row.fork_of, SRC.thread);
    assert.equal(row.fork_cutoff, SRC.msgs[1]);
    assert.equal(row.project, 'acme-web');
    assert.deepEqual(await texts(id), ['user: src 0', 'assistant: src 1']);
    const [conversation, ...more] = (await get(`${P}/${id}/conversations`)).json();
    assert.equal(more.length, 0);
    assert.deepEqual([conversation.agent, conversation.model, conversation.permission_mode, conversation.effort], ['claude', 'opus', 'default', null]);
    assert.ok((await get(P)).json().items.some((t: { id: string }) => t.id === id), "in bob's thread list");
    assert.equal((await get(`${P}/${id}`, ALICE)).status, 404, "the fork is bob's, not the source owner's");
    assert.deepEqual(await texts(SRC.thread), SRC.msgs.map((_, i) => `${i % 2 === 0 ? 'user' : 'assistant'}: src ${i}`), 'the source is untouched');
  });

  it("with text, the fork's first turn runs in a new session briefed with the history up to the cutoff; forks of forks honour every cutoff", async () => {
    const first = await fork(SRC.thread, { message_id: SRC.msgs[2] });
    const res = await post(`${P}/${first}/fork`, { message_id: SRC.msgs[1], text: 'Try another way', model: 'claude:sonnet' });
    assert.equal(res.status, 201, res.text);
    const second = res.json().thread_id as string;
    const socket = (await connectLive(service.port, { thread: second, after: '0' }, { authorization: BOB.authorization! })) as LiveClient;
    const events = await socket.until(asleep(1));
    socket.close();
    const said = saidIn(events);
    assert.match(said, /Working on: Try another way/);
    assert.match(said, /\[demo\] history=2 latest="\[assistant\] src 1"/, `the brief stops at the cutoff: ${said}`);
    assert.match(said, /model=sonnet .*turn=1 /, 'a fresh session on the picked model');
    const ledger = await texts(second);
    assert.deepEqual(ledger.slice(0, 3), ['user: src 0', 'assistant: src 1', 'user: Try another way']);
    assert.ok(!ledger.includes('user: src 2'), "the first fork's cutoff is tighter here");
    assert.ok(ledger.some((line) => line.startsWith('system: This thread is a fork')), `the brief is said as a fork's: ${ledger.join(' | ')}`);
    assert.ok(!ledger.some((line) => line.includes('could not continue')), 'no failure to continue a session is claimed');
    // A fork of that fork at its own message: the source up to both cutoffs, then that message.
    const third = await fork(second, { message_id: (await get(`${P}/${second}/messages?limit=200`)).json().items.find((m: { text: string }) => m.text === 'Try another way').id });
    assert.deepEqual(await texts(third), ['user: src 0', 'assistant: src 1', 'user: Try another way']);
    // And at a message its parent inherits: the tightest cutoff wins.
    assert.deepEqual(await texts(await fork(second, { message_id: SRC.msgs[0] })), ['user: src 0']);
  });

  it("a fork at a message whose run has not ended is refused 409 turn_running (queue_not_empty for a queued one), writing nothing; at an ended run's message it is made", async () => {
    const sent = await post(`${P}/${testId(30_100)}/directives`, { text: 'First', model: 'claude:opus' }, ALICE);
    assert.equal(sent.status, 202, sent.text);
    const id = sent.json().thread_id as string;
    await idleThread(service.port, id, ALICE);
    const held = await post(`${P}/${id}/directives`, { text: 'Hold [wait]' }, ALICE);
    assert.equal(held.status, 202, held.text);
    const queued = await post(`${P}/${id}/directives`, { text: 'Then this', when_busy: 'queue' }, ALICE);
    assert.equal(queued.status, 202, queued.text);
    const messageOf = async (text: string) => (await get(`${P}/${id}/messages?limit=200`, ALICE)).json().items.find((m: { text: string }) => m.text === text).id as string;
    const threadsBefore = (await get(P, ALICE)).json().items.length;
    for (const [message_id, code] of [[await messageOf('Hold [wait]'), 'turn_running'], [(await get(`${P}/${id}/queue`, ALICE)).json()[0].message_id as string, 'queue_not_empty']] as const) {
      const refused = await post(`${P}/${id}/fork`, { message_id, text: 'Go another way' }, ALICE);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      assert.equal(refused.json().code, code);
    }
    assert.equal((await get(P, ALICE)).json().items.length, threadsBefore, 'no fork was written');
    // The message of a run that ended forks while the later run goes on.
    const earlier = await post(`${P}/${id}/fork`, { message_id: await messageOf('First') }, ALICE);
    assert.equal(earlier.status, 201, earlier.text);
    await post(`${P}/${id}/cancel`, {}, ALICE);
    // The queued directive runs after the cancel; once it has, nothing is running or waiting.
    for (let i = 0; (await get(`${P}/${id}/queue`, ALICE)).json().length > 0 || (await get(`${P}/${id}/conversations`, ALICE)).json().some((c: { turn_running: boolean }) => c.turn_running); i += 1) {
      assert.ok(i < 1200, 'the thread goes idle');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const ended = await post(`${P}/${id}/fork`, { message_id: await messageOf('Hold [wait]') }, ALICE);
    assert.equal(ended.status, 201, ended.text);
  });

  it('refuses: unauthenticated 401, a thread the caller cannot read 404, a message outside its ledger or a bad body 422, cross-origin 403', async () => {
    const unauthenticated = await service.ask({ method: 'POST', path: `${P}/${SRC.thread}/fork`, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message_id: SRC.msgs[0] }) });
    assert.equal(unauthenticated.status, 401);
    for (const [thread, body] of [[F.root, { message_id: F.rootMsgs[0] }], [F.root, {}], [testId(39_999), { message_id: SRC.msgs[0] }]] as const) {
      const res = await post(`${P}/${thread}/fork`, body);
      assert.equal(res.status, 404, res.text);
      assert.equal(res.json().code, 'thread_unavailable');
    }
    const first = await fork(SRC.thread, { message_id: SRC.msgs[1] });
    // Another thread's message, the source's past the fork's cutoff, and no message at all.
    for (const message_id of [F.rootMsgs[0], SRC.msgs[2], testId(39_998)]) {
      const res = await post(`${P}/${first}/fork`, { message_id });
      assert.equal(res.status, 422, res.text);
      assert.equal(res.json().code, 'validation_failed');
      assert.equal(res.json().errors[0].path, 'body.message_id');
    }
    for (const body of [{}, { message_id: 'x' }, { message_id: SRC.msgs[0], text: '  ' }, { message_id: SRC.msgs[0], model: 'codex' }, { message_id: SRC.msgs[0], model: 'claude:gpt-9' }]) {
      const res = await post(`${P}/${SRC.thread}/fork`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json().code, 'validation_failed');
    }
    const crossOrigin = await post(`${P}/${SRC.thread}/fork`, { message_id: SRC.msgs[0] }, { ...BOB, origin: 'http://evil.example' });
    assert.equal(crossOrigin.status, 403);
    assert.equal(crossOrigin.json().code, 'cross_origin_refused');
  });
});
