import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { F } from '../support/fixture-world.ts';
import { connectLive, typesOf, type LiveClient } from '../support/live-client.ts';
import { startFixtureService, type TestService } from '../support/service.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (n: number) => (events: readonly WireEvent[]) => events.filter((e) => e.type === 'reflex_asleep').length >= n;

describe('thread operations: teleport and summon', () => {
  let service: TestService;
  let consoleThread: string; // alice's, idle, one claude conversation
  /** A new idle console thread of alice's with one claude conversation. */
  async function newConsoleThread(): Promise<string> {
    const key = randomUUID();
    const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const res = await post(`${P}/${key}/directives`, { text: 'Start here', model: 'claude:opus', project: 'acme-web' });
    await socket.until(asleep(1));
    socket.close();
    const thread = res.json().thread_id;
    // The turn is released just after its last event is stored: waited for, so a move finds the thread idle.
    for (let waited = 0; waited < 5_000; waited += 20) {
      if (!(await get(`${P}/${thread}/conversations`)).json().some((c: { turn_running: boolean }) => c.turn_running)) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return thread;
  }
  before(async () => {
    service = await startFixtureService();
    // Reads never wait on an agent: what each offers is known first.
    await service.knowOffers();
    consoleThread = await newConsoleThread();
  });
  after(() => service.close());

  const get = (path: string, headers = ALICE) => service.ask({ path, headers });
  const post = (path: string, body: unknown, headers = ALICE) => service.ask({ method: 'POST', path, headers, body: JSON.stringify(body) });
  const live = async (thread: string) => (await connectLive(service.port, { thread, after: '0' })) as LiveClient;

  it('GET operations: source, teleport and summon availability, barred channels', async () => {
    const res = await get(`${P}/${consoleThread}/operations`);
    assert.equal(res.status, 200);
    const ops = res.json();
    assert.deepEqual(ops.source, { channel: 'console', id: consoleThread, shared: false, metadata: { name: 'Start here' } });
    assert.deepEqual(ops.barred, { quiet: 'No agent is connected to this channel' });
    assert.deepEqual(Object.keys(ops.teleport.routes).sort(), ['console', 'team-chat']);
    assert.deepEqual(ops.teleport.routes['team-chat'].map((r: { id: string }) => r.id), ['claude:opus', 'claude:sonnet']);
    assert.deepEqual(ops.teleport.destinations.map((d: { id: string }) => d.id), ['general'], 'no barred room, no console for a console thread');
    assert.equal(ops.teleport.here, null);
    assert.equal(ops.teleport.reason, null);
    assert.deepEqual(ops.summon.here, ops.source);
    assert.deepEqual(ops.summon.routes, { console: [{ id: 'codex', agent: 'codex', model: null }] });
    assert.equal(ops.summon.reason, null);
  });

  it('a busy thread carries the reason, and refuses to move with 409', async () => {
    const key = randomUUID();
    const socket = await live(key);
    const started = await post(`${P}/${key}/directives`, { text: 'Hold on [wait]', model: 'claude:opus', project: 'acme-web' });
    assert.equal(started.status, 202);
    const busy = started.json().thread_id;
    await socket.until((events) => events.some((e) => e.type === 'run_started'));
    const ops = (await get(`${P}/${busy}/operations`)).json();
    assert.equal(ops.teleport.reason, 'A turn is running on this thread');
    assert.equal(ops.summon.reason, ops.teleport.reason);
    const res = await post(`${P}/${busy}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
    assert.equal(res.status, 409);
    assert.equal(res.json().detail, 'A turn is running on this thread');
    assert.equal(res.json().code, 'turn_running');
    const summon = await post(`${P}/${busy}/summon`, { route: 'codex', brief: 'Take over' });
    assert.equal(summon.status, 409);
    assert.equal((await post(`${P}/${busy}/cancel`, {})).status, 202);
    await socket.until(asleep(1));
    socket.close();
  });

  it('GET addresses: one level of a channel, barred rows flagged, inside opens a place', async () => {
    const top = await get(`${P}/${consoleThread}/channels/team-chat/addresses`);
    assert.equal(top.status, 200);
    assert.deepEqual(top.json(), [
      { channel: 'team-chat', id: 'general', shared: true, metadata: { name: '#general', inside: 'general' } },
      { channel: 'team-chat', id: 'ops', shared: true, metadata: { name: '#ops', barred: 'The agent is not in this room' } },
    ]);
    const inside = await get(`${P}/${consoleThread}/channels/team-chat/addresses?inside=general`);
    assert.deepEqual(inside.json(), [{ channel: 'team-chat', id: 'general/t1', shared: true, metadata: { name: 'Release thread' } }]);
    assert.equal((await get(`${P}/${consoleThread}/channels/team-chat/addresses?inside=nowhere`)).status, 422);
  });

  it('GET addresses: 409 for a channel that cannot be browsed, has no agent, or is not linked to the user', async () => {
    for (const [channel, headers, thread, detail] of [
      ['console', ALICE, consoleThread, /cannot be browsed/],
      ['quiet', ALICE, consoleThread, /No agent/],
      ['team-chat', BOB, F.bobThread, /not linked/],
      ['nowhere', ALICE, consoleThread, /not connected/],
    ] as const) {
      const res = await get(`${P}/${thread}/channels/${channel}/addresses`, headers);
      assert.equal(res.status, 409, channel);
      assert.match(res.json().detail, detail);
    }
    assert.equal((await get(`${P}/${F.bobThread}/channels/team-chat/addresses`)).status, 404, "another user's thread");
  });

  it('teleport refuses a barred, unlinked or unoffered destination with 409, and a prompt off the console with 422', async () => {
    // Each refusal has its own catalog code: a client branches on `code`, never on the prose.
    const cases: [unknown, number, RegExp, string, Record<string, string>?, string?][] = [
      [{ destination: { channel: 'team-chat', id: 'ops' } }, 409, /not in this room/, 'destination_barred'],
      [{ destination: { channel: 'quiet', id: 'lobby' } }, 409, /No agent/, 'agent_not_on_channel'],
      [{ destination: { channel: 'team-chat', id: 'gone' } }, 409, /no longer offered/, 'destination_not_offered'],
      [{ destination: { channel: 'console', id: 'elsewhere' } }, 409, /one destination/, 'destination_not_offered'],
      [{ destination: { channel: 'console', id: 'new' } }, 409, /already on the console/, 'already_on_console'],
      [{ destination: { channel: 'nowhere', id: 'x' } }, 409, /not connected/, 'channel_not_connected'],
      [{ destination: { channel: 'team-chat', id: 'general' }, prompt: 'hi' }, 422, /valid/, 'validation_failed'],
      [{ destination: { channel: 'team-chat', id: 'general' }, new_thread: 'yes' }, 422, /valid/, 'validation_failed'],
      [{ destination: 'general' }, 422, /valid/, 'validation_failed'],
      [{ destination: { channel: 'team-chat', id: 'general' } }, 409, /not linked/, 'channel_not_linked', BOB, F.bobThread],
    ];
    for (const [body, status, detail, code, headers, thread] of cases) {
      const res = await post(`${P}/${thread ?? consoleThread}/teleport`, body, headers ?? ALICE);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.match(res.json().detail, detail, JSON.stringify(body));
      assert.equal(res.json().code, code, JSON.stringify(body));
    }
  });

  it('teleport to a chat room: a new thread there, the gateway event on both threads', async () => {
    const moving = await newConsoleThread();
    const source = await live(moving);
    const res = await post(`${P}/${moving}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
    assert.equal(res.status, 202, res.text);
    const { thread_id, conversation_id } = res.json();
    const landed = await live(thread_id);
    const [out] = (await source.until((e) => e.some((x) => x.type === 'gateway'))).filter((e) => e.type === 'gateway');
    const [inbound] = (await landed.until((e) => e.some((x) => x.type === 'gateway'))).filter((e) => e.type === 'gateway');
    source.close();
    landed.close();
    assert.equal((out!.data.to as { thread_id: string }).thread_id, thread_id);
    assert.equal((inbound!.data.from as { thread_id: string }).thread_id, moving);
    const thread = (await get(`${P}/${thread_id}`)).json();
    assert.equal(thread.channel, 'team-chat');
    const conversations = (await get(`${P}/${thread_id}/conversations`)).json();
    assert.equal(conversations[0].id, conversation_id);
    assert.equal(conversations[0].agent, 'claude');
    assert.match(conversations[0].address.id, /^general\//, 'a new thread under #general');
  });

  it('teleport back to a new console thread with a prompt starts a run there; summon hands the chat thread to codex', async () => {
    const chat = (await post(`${P}/${await newConsoleThread()}/teleport`, { destination: { channel: 'team-chat', id: 'general' } })).json().thread_id;
    const ops = (await get(`${P}/${chat}/operations`)).json();
    assert.deepEqual(ops.teleport.destinations[0], { channel: 'console', id: 'new', shared: false, metadata: { name: 'New console thread' } });
    assert.deepEqual(ops.summon.routes, { 'team-chat': [{ id: 'codex', agent: 'codex', model: null }] });

    const res = await post(`${P}/${chat}/teleport`, { destination: { channel: 'console', id: 'new' }, prompt: 'Carry on here' });
    assert.equal(res.status, 202, res.text);
    const landed = await live(res.json().thread_id);
    const events = await landed.until(asleep(1));
    landed.close();
    assert.equal(typesOf(events)[0], 'gateway');
    assert.ok(typesOf(events).includes('run_started'));
    assert.equal(typesOf(events).at(-2), 'run_finished');

    // The moved conversation left the chat thread: it is handed over where it is now, or on another chat thread.
    const left = await post(`${P}/${chat}/summon`, { route: 'codex', brief: 'x' });
    assert.equal(left.status, 409);
    assert.match(left.json().detail, /moved to console/);
    const other = (await post(`${P}/${await newConsoleThread()}/teleport`, { destination: { channel: 'team-chat', id: 'general' } })).json().thread_id;
    const socket = await live(other);
    const summoned = await post(`${P}/${other}/summon`, { route: 'codex', brief: 'Review the release notes', hint: 'Claude is busy' });
    assert.equal(summoned.status, 202, summoned.text);
    const after = await socket.until(asleep(1));
    socket.close();
    const gateway = after.find((e) => e.type === 'gateway' && e.data.operation === 'summon')!;
    assert.equal(gateway.data.hint, 'Claude is busy');
    const conversations = (await get(`${P}/${other}/conversations`)).json();
    assert.equal(conversations.at(-1).id, summoned.json().conversation_id);
    assert.equal(conversations.at(-1).agent, 'codex');
    assert.deepEqual(conversations.at(-1).address, conversations[0].address, 'handed over in place');
    const ledger = (await get(`${P}/${other}/messages`)).json().items.map((m: { text: string }) => m.text);
    assert.ok(ledger.includes('Review the release notes'));
    assert.ok(ledger.includes('Handed over to codex: Claude is busy'));
  });

  it('summon refuses a route that is not offered (409) or not known at all (422)', async () => {
    const own = await post(`${P}/${consoleThread}/summon`, { route: 'claude:opus', brief: 'x' });
    assert.equal(own.status, 409, 'its own agent is not another agent');
    assert.equal(own.json().code, 'route_not_offered');
    assert.equal((await post(`${P}/${consoleThread}/summon`, { route: 'gpt:9', brief: 'x' })).status, 422);
    assert.equal((await post(`${P}/${consoleThread}/summon`, { route: 'codex', brief: '   ' })).status, 422);
    assert.equal((await post(`${P}/${F.bobThread}/summon`, { route: 'codex', brief: 'x' })).status, 404);
  });
});
