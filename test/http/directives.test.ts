import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { F } from '../support/fixture-world.ts';
import { connectLive, typesOf, type LiveClient } from '../support/live-client.ts';
import { startFixtureService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console';
const ended = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');
const replyOf = (events: readonly WireEvent[]) =>
  events.filter((e) => e.type === 'message' && e.data.message && (e.data.message as { role: string }).role === 'assistant')
    .map((e) => (e.data.message as { text: string }).text).join('');

describe('directives, runs and the live socket', () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService();
  });
  after(() => service.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = ALICE) =>
    service.ask({ method: 'POST', path, headers, body: JSON.stringify(body) });
  const live = async (query: Record<string, string>, headers?: Record<string, string>) => {
    const client = await connectLive(service.port, query, headers);
    assert.ok(!('refused' in client), `refused: ${JSON.stringify(client)}`);
    return client as LiveClient;
  };

  it('a new console thread by key: 202 at once, then its events in order on the socket', async () => {
    const key = randomUUID();
    const socket = await live({ thread: key, after: '0' });
    const res = await post(`${P}/threads/${key}/directives`, { text: 'Hello agent', model: 'claude:sonnet', project: 'acme-web', permission_mode: 'plan', effort: 'high' });
    assert.equal(res.status, 202, res.text);
    const answer = res.json();
    assert.deepEqual(Object.keys(answer).sort(), ['conversation_id', 'key', 'run_id', 'thread_id']);
    assert.equal(answer.key, key);
    const events = await socket.until(ended);
    socket.close();
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'seq from 1, no gaps');
    assert.ok(events.every((e) => e.thread_id === answer.thread_id));
    const types = typesOf(events);
    assert.equal(types[0], 'message', "the user's own ledger message first");
    assert.equal(types[1], 'run_started');
    assert.equal(types.at(-1), 'reflex_asleep');
    assert.equal(types.at(-2), 'run_finished');
    assert.match(replyOf(events), /mode=plan model=sonnet effort=high/, 'the posture, model and effort reached the agent');

    const thread = (await service.ask({ path: `${P}/threads/${answer.thread_id}`, headers: ALICE })).json();
    assert.equal(thread.key, key);
    assert.equal(thread.project, 'acme-web');
    assert.equal(thread.channel, 'console');
    const runs = (await service.ask({ path: `${P}/threads/${answer.thread_id}/conversations/${answer.conversation_id}/runs`, headers: ALICE })).json();
    assert.equal(runs.items[0].status, 'succeeded');
    assert.match(runs.items[0].directory, /acme-web$/);
    const ledger = (await service.ask({ path: `${P}/threads/${answer.thread_id}/messages`, headers: ALICE })).json();
    assert.deepEqual(ledger.items.map((m: { role: string }) => m.role), ['assistant', 'user']);
    const model = (await service.ask({ path: `${P}/threads/${answer.thread_id}/runs/${answer.run_id}/messages`, headers: ALICE })).json();
    assert.ok(model.items.some((m: { role: string }) => m.role === 'assistant'));

    // Continuing it by row id: model and project are not re-routed; the same model is accepted.
    const next = await post(`${P}/threads/${answer.thread_id}/directives`, { text: 'Again', model: 'claude:sonnet' });
    assert.equal(next.status, 202, next.text);
    assert.equal(next.json().conversation_id, answer.conversation_id);
  });

  it('a retried message_id answers the first answer again and starts one run', async () => {
    const key = randomUUID();
    const body = { text: 'Only once', message_id: 'client-msg-1' };
    const [first, second] = await Promise.all([post(`${P}/threads/${key}/directives`, body), post(`${P}/threads/${key}/directives`, body)]);
    assert.equal(first.status, 202);
    assert.equal(second.status, 202);
    assert.deepEqual(first.json(), second.json());
    const { thread_id, conversation_id } = first.json();
    const socket = await live({ thread: thread_id, after: '0' });
    await socket.until(ended);
    const third = await post(`${P}/threads/${key}/directives`, body);
    assert.deepEqual(third.json(), first.json());
    await new Promise((resolve) => setTimeout(resolve, 200)); // a window in which no second run must start
    socket.close();
    assert.equal(typesOf(socket.events).filter((t) => t === 'run_started').length, 1);
    const runs = (await service.ask({ path: `${P}/threads/${thread_id}/conversations/${conversation_id}/runs`, headers: ALICE })).json();
    assert.equal(runs.items.length, 1);
  });

  it('an approval round trip: approval_requested, readable at /pending, answered by the batch endpoint', async () => {
    const key = randomUUID();
    const socket = await live({ thread: key, after: '0' });
    const { thread_id } = (await post(`${P}/threads/${key}/directives`, { text: '[approval] write the file' })).json();
    const [asked] = (await socket.until((events) => events.some((e) => e.type === 'approval_requested'))).filter((e) => e.type === 'approval_requested');
    const pending = asked!.data.pending as { id: string; options: { id: string }[] };
    const listed = (await service.ask({ path: `${P}/threads/${thread_id}/pending`, headers: ALICE })).json();
    assert.deepEqual(listed.map((p: { id: string }) => p.id), [pending.id]);
    assert.deepEqual(pending.options.map((o) => o.id), ['allow', 'reject']);

    const wrong = await post(`${P}/threads/${thread_id}/responses`, { responses: [{ id: pending.id, option: 'maybe' }] });
    assert.equal(wrong.status, 422);
    const unknown = await post(`${P}/threads/${thread_id}/responses`, { responses: [{ id: pending.id, option: 'allow' }, { id: F.pending, option: 'allow' }] });
    assert.equal(unknown.status, 422, 'an id not pending on this thread: nothing applied');
    assert.equal(unknown.json().errors[0].path, 'body.responses.1');
    assert.equal((await service.ask({ path: `${P}/threads/${thread_id}/pending`, headers: ALICE })).json().length, 1);

    const ok = await post(`${P}/threads/${thread_id}/responses`, { responses: [{ id: pending.id, option: 'allow' }] });
    assert.equal(ok.status, 202);
    const events = await socket.until(ended);
    socket.close();
    assert.match(replyOf(events), /Permission: allow\./);
    assert.deepEqual((await service.ask({ path: `${P}/threads/${thread_id}/pending`, headers: ALICE })).json(), []);
  });

  it('a crashing agent gives run_error then reflex_asleep, and the next turn runs on a restarted agent', async () => {
    const key = randomUUID();
    const socket = await live({ thread: key, after: '0' });
    const { thread_id, conversation_id } = (await post(`${P}/threads/${key}/directives`, { text: '[crash] now' })).json();
    const events = await socket.until(ended);
    const types = typesOf(events);
    assert.equal(types.at(-1), 'reflex_asleep');
    assert.equal(types.at(-2), 'run_error');
    assert.match(String(events.at(-2)!.data.error), /exited/);
    const runs = (await service.ask({ path: `${P}/threads/${thread_id}/conversations/${conversation_id}/runs`, headers: ALICE })).json();
    assert.equal(runs.items[0].status, 'failed');

    const again = await post(`${P}/threads/${thread_id}/directives`, { text: 'Are you back?' });
    assert.equal(again.status, 202);
    const after = await socket.until((all) => all.filter((e) => e.type === 'reflex_asleep').length === 2);
    socket.close();
    assert.equal(typesOf(after).at(-2), 'run_finished');
  });

  it('409 for a differing model on an owned thread; 422 for a value outside its vocabulary', async () => {
    const key = randomUUID();
    const { thread_id } = (await post(`${P}/threads/${key}/directives`, { text: 'Route me', model: 'claude:opus' })).json();
    const socket = await live({ thread: thread_id, after: '0' });
    await socket.until(ended);
    socket.close();
    const differing = await post(`${P}/threads/${thread_id}/directives`, { text: 'Switch', model: 'claude:sonnet' });
    assert.equal(differing.status, 409);
    assert.equal(differing.json().code, 'reroute_refused');
    assert.match(differing.json().detail, /claude:opus/);
    for (const [body, path] of [
      [{ text: 'x', permission_mode: 'yolo' }, 'body.permission_mode'],
      [{ text: 'x', effort: 'max' }, 'body.effort'],
      [{ text: 'x', model: 'gpt:9' }, 'body.model'],
      [{ text: 'x', project: 'nope' }, 'body.project'],
      [{ text: '   ' }, 'body.text'],
      [{ text: 'x', message_id: 7 }, 'body.message_id'],
    ] as const) {
      const res = await post(`${P}/threads/${randomUUID()}/directives`, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.equal(res.json().errors[0].path, path);
    }
    const threads = (await service.ask({ path: `${P}/threads?limit=200`, headers: ALICE })).json();
    assert.ok(!threads.items.some((t: { title: string }) => t.title === 'x'), 'a refused directive writes no thread');
  });

  it("refuses a directive on another user's, a shared or a non-console thread", async () => {
    assert.equal((await post(`${P}/threads/${F.shared}/directives`, { text: 'hi' })).status, 403, 'a member is not the owner');
    const bobs = await post(`${P}/threads/${F.bobThread}/directives`, { text: 'hi' });
    assert.equal(bobs.status, 404, "another user's row id names that thread: 404, never a key of the caller's");
    assert.equal(bobs.json().detail, 'Thread unavailable');
    const key = randomUUID();
    const { thread_id } = (await post(`${P}/threads/${key}/directives`, { text: 'Then move me' })).json();
    const socket = await live({ thread: thread_id, after: '0' });
    await socket.until(ended);
    socket.close();
    const moved = await post(`${P}/threads/${thread_id}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
    assert.equal(moved.status, 202, moved.text);
    const onChat = await post(`${P}/threads/${moved.json().thread_id}/directives`, { text: 'hi' });
    assert.equal(onChat.status, 409);
    assert.equal(onChat.json().code, 'not_console_thread');
    assert.match(onChat.json().detail, /console threads only/);
  });

  it('refuses text the database could not store (NUL) with 422, not an outage', async () => {
    const res = await post(`${P}/threads/${randomUUID()}/directives`, { text: 'a\u0000b' });
    assert.equal(res.status, 422);
    assert.equal(res.json().errors[0].path, 'body.text');
  });

  it('a socket on an upper-case key delivers the thread its directives write', async () => {
    const key = randomUUID();
    const socket = await live({ thread: key.toUpperCase(), after: '0' });
    assert.equal((await post(`${P}/threads/${key}/directives`, { text: 'Case does not matter' })).status, 202);
    const events = await socket.until(ended);
    socket.close();
    assert.equal(typesOf(events)[1], 'run_started');
  });

  it('PATCH permission-mode switches the posture, and the next turn runs under it', async () => {
    const key = randomUUID();
    const { thread_id, conversation_id } = (await post(`${P}/threads/${key}/directives`, { text: 'first', model: 'claude:opus' })).json();
    const socket = await live({ thread: thread_id, after: '0' });
    await socket.until(ended);
    const patch = (mode: unknown) => service.ask({ method: 'PATCH', path: `${P}/conversations/${conversation_id}/permission-mode`, headers: ALICE, body: JSON.stringify({ permission_mode: mode }) });
    const res = await patch('acceptEdits');
    assert.equal(res.status, 200);
    assert.equal(res.json().permission_mode, 'acceptEdits');
    assert.equal((await patch('yolo')).status, 422);
    assert.equal((await patch(null)).status, 422);
    await post(`${P}/threads/${thread_id}/directives`, { text: 'second' });
    const events = await socket.until((all) => all.filter((e) => e.type === 'reflex_asleep').length === 2);
    socket.close();
    assert.match(replyOf(events.slice(events.findIndex((e) => e.type === 'reflex_asleep') + 1)), /mode=acceptEdits/);
    const other = await service.ask({ method: 'PATCH', path: `${P}/conversations/${F.bobConv}/permission-mode`, headers: ALICE, body: '{"permission_mode":"plan"}' });
    assert.equal(other.status, 404);
  });

  it('the live socket: auth, Origin, an inaccessible thread, bad queries, and a plain GET', async () => {
    assert.deepEqual(await connectLive(service.port, { thread: F.root }, {}), { refused: 401 });
    assert.deepEqual(await connectLive(service.port, { thread: F.root }, { authorization: 'Bearer token-alice', origin: 'http://evil.example' }), { refused: 403 });
    assert.deepEqual(await connectLive(service.port, { thread: F.root }, { authorization: 'Bearer token-bob' }), { refused: 404 });
    assert.deepEqual(await connectLive(service.port, { thread: F.root, after: '-1' }), { refused: 422 });
    assert.deepEqual(await connectLive(service.port, {}), { refused: 422 });
    const plain = await service.ask({ path: `${P}/live?thread=${F.root}`, headers: ALICE });
    assert.equal(plain.status, 426);
    const member = await live({ thread: F.shared });
    member.close();
  });

  it('a client that reconnects with after misses nothing', async () => {
    const key = randomUUID();
    const first = await live({ thread: key, after: '0' });
    const { thread_id } = (await post(`${P}/threads/${key}/directives`, { text: '[slow] take your time' })).json();
    const seen = await first.until((events) => events.some((e) => e.type === 'run_started'));
    first.close();
    const last = seen.at(-1)!.seq;
    const second = await live({ thread: thread_id, after: String(last) });
    const rest = await second.until(ended);
    second.close();
    const all = [...seen, ...rest];
    assert.deepEqual(all.map((e) => e.seq), all.map((_, i) => i + 1), 'every seq once, in order');
  });
});
