import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { World } from '../../domain/world.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, typesOf, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const AUTH = 'the agent needs authentication (it offers demo-login); give it credentials through its env or env_pass';
const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console';
const ended = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');
const replyOf = (events: readonly WireEvent[]) =>
  events.filter((e) => e.type === 'message' && e.data.message && (e.data.message as { role: string }).role === 'assistant')
    .map((e) => (e.data.message as { text: string }).text).join('');

/**
 * The fixture world with agents that exercise the rule: claude gives no lists (all the demo agent's
 * Claude profile offers) and refuses bypassPermissions when asked to switch; codex (the Codex
 * profile) names a model and an effort the agent does not advertise; ghost cannot start; locked
 * needs authentication (the demo agent answers `session/new` with `auth_required`).
 */
function world(): World {
  const base = fixtureWorld();
  return {
    ...base,
    agents: [
      { id: 'claude', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null, env: { DEMO_AGENT_REFUSE: 'bypassPermissions' } },
      { id: 'codex', models: ['gpt-5-codex', 'o3'], efforts: ['high', 'max'], permission_modes: null, default_permission_mode: null, command: null, env: { DEMO_AGENT_PROFILE: 'codex' } },
      { id: 'ghost', models: ['m1'], efforts: [], permission_modes: ['default'], default_permission_mode: 'default', command: ['/nonexistent/acp-agent'] },
      { id: 'locked', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null, env: { DEMO_AGENT_REQUIRE_AUTH: '1' } },
    ],
    channels: base.channels.map((channel) => (channel.id === 'console' ? { ...channel, agents: ['claude', 'codex', 'ghost', 'locked'] } : channel)),
  };
}

describe('what the agent offers is the truth: routes, permissions and checks', () => {
  let service: TestService;
  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(world());
    service = await startService({}, { storage });
    // Reads never wait on an agent: the test waits until what each offers is known.
    await service.knowOffers();
  });
  after(() => service.close());

  const get = (path: string) => service.ask({ path, headers: ALICE });
  const post = (path: string, body: unknown) => service.ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) });
  const live = async (thread: string) => {
    const client = await connectLive(service.port, { thread, after: '0' });
    assert.ok(!('refused' in client), `refused: ${JSON.stringify(client)}`);
    return client as LiveClient;
  };

  it('GET /routes lists what each agent advertised, narrowed by the world; an agent that cannot start is left out', async () => {
    assert.deepEqual((await get(`${P}/routes`)).json(), [
      { id: 'claude:opus', agent: 'claude', model: 'opus' },
      { id: 'claude:sonnet', agent: 'claude', model: 'sonnet' },
      { id: 'claude:haiku', agent: 'claude', model: 'haiku' },
      // The world's o3 is not advertised by the agent: never invented.
      { id: 'codex:gpt-5-codex', agent: 'codex', model: 'gpt-5-codex' },
    ]);
  });

  it("GET /permissions lists the agents' own modes and efforts, the default being the mode a session starts in; an unavailable agent says why", async () => {
    assert.deepEqual((await get(`${P}/permissions`)).json(), [
      { agent: 'claude', modes: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'], default: 'default', efforts: ['low', 'medium', 'high'], unavailable: null, steering: true },
      // The world's efforts narrow the agent's: max is not advertised, low and medium are left out.
      // Claude Code's adapter steers (the demo agent's claude profile says so in its initialize answer); the pinned Codex's does not.
      { agent: 'codex', modes: ['read-only', 'auto', 'full-access'], default: 'read-only', efforts: ['high'], unavailable: null, steering: false },
      { agent: 'ghost', modes: [], default: null, efforts: [], unavailable: 'the agent could not start: its command was not found', steering: false },
      { agent: 'locked', modes: [], default: null, efforts: [], unavailable: AUTH, steering: false },
    ]);
  });

  it('GET /permissions is described in the OpenAPI document with its efforts', async () => {
    const doc = (await service.ask({ path: '/api/openapi.json' })).json();
    const schema = doc.paths['/api/console/permissions'].get.responses['200'].content['application/json'].schema;
    assert.equal(schema.type, 'array');
    assert.deepEqual(Object.keys(schema.items.properties).sort(), ['agent', 'default', 'efforts', 'modes', 'steering', 'unavailable']);
    assert.deepEqual(schema.items.properties.efforts, { type: 'array', items: { type: 'string' } });
  });

  it('a new-thread directive or a summon naming an unavailable agent is 409 saying why, without the agent\'s own text', async () => {
    for (const [model, reason] of [['ghost:m1', 'ghost is unavailable: the agent could not start: its command was not found'], ['locked:opus', `locked is unavailable: ${AUTH}`], ['locked', `locked is unavailable: ${AUTH}`]] as const) {
      const res = await post(`${P}/threads/${randomUUID()}/directives`, { text: 'hi', model });
      assert.equal(res.status, 409, res.text);
      assert.equal(res.json().detail, reason);
      assert.doesNotMatch(res.text, /login:|x-api-key|Secret words/);
    }
    const made = await post(`${P}/threads/${randomUUID()}/directives`, { text: 'Hello', model: 'claude:opus' });
    assert.equal(made.status, 202, made.text);
    const socket = await live(made.json().thread_id);
    await socket.until(ended);
    socket.close();
    const summon = await post(`${P}/threads/${made.json().thread_id}/summon`, { route: 'locked:opus', brief: 'take over' });
    assert.equal(summon.status, 409, summon.text);
    assert.equal(summon.json().detail, `locked is unavailable: ${AUTH}`);
  });

  it('a directive naming a model, mode or effort the agent does not offer is 422, and nothing is written', async () => {
    const before = (await get(`${P}/threads?limit=200`)).json().items.length;
    for (const [body, path] of [
      [{ text: 'nope', model: 'codex:o3' }, 'body.model'],
      [{ text: 'nope', model: 'codex:gpt-5-codex', effort: 'max' }, 'body.effort'],
      // Advertised by the agent, but narrowed out by the world.
      [{ text: 'nope', model: 'codex:gpt-5-codex', effort: 'medium' }, 'body.effort'],
      [{ text: 'nope', model: 'codex:gpt-5-codex', permission_mode: 'dontAsk' }, 'body.permission_mode'],
      [{ text: 'nope', model: 'claude:opus', permission_mode: 'read-only' }, 'body.permission_mode'],
    ] as const) {
      const res = await post(`${P}/threads/${randomUUID()}/directives`, body);
      assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.text}`);
      assert.equal(res.json().errors[0].path, path);
    }
    assert.equal((await get(`${P}/threads?limit=200`)).json().items.length, before, 'no thread written');
  });

  it("a directive to codex runs in the agent's own start mode, with an effort set through its reasoning_effort option; PATCH checks the agent's modes", async () => {
    const key = randomUUID();
    const res = await post(`${P}/threads/${key}/directives`, { text: 'Hello codex', model: 'codex:gpt-5-codex', effort: 'high' });
    assert.equal(res.status, 202, res.text);
    const { thread_id, conversation_id } = res.json();
    const socket = await live(thread_id);
    const events = await socket.until(ended);
    socket.close();
    // The agent's own env values are hidden in what it says, and the profile's name (`codex`) is one.
    assert.match(replyOf(events), /mode=read-only model=gpt-5-codex effort=high/);
    const conversation = (await get(`${P}/threads/${thread_id}/conversations`)).json()[0];
    assert.equal(conversation.permission_mode, 'read-only');

    const patch = (mode: string) =>
      service.ask({ method: 'PATCH', path: `${P}/conversations/${conversation_id}/permission-mode`, headers: ALICE, body: JSON.stringify({ permission_mode: mode }) });
    for (const mode of ['yolo', 'dontAsk']) {
      const refused = await patch(mode);
      assert.equal(refused.status, 422, mode);
      assert.equal(refused.json().errors[0].path, 'body.permission_mode');
    }
    assert.equal((await get(`${P}/threads/${thread_id}/conversations`)).json()[0].permission_mode, 'read-only', 'nothing written');
    const switched = await patch('full-access');
    assert.equal(switched.status, 200, switched.text);
    assert.equal(switched.json().permission_mode, 'full-access');
  });

  it('a posture the agent refuses mid-run reaches the socket as posture_refused; the run goes on in the mode it has', async () => {
    const key = randomUUID();
    const res = await post(`${P}/threads/${key}/directives`, { text: 'Go wild', model: 'claude:sonnet', permission_mode: 'bypassPermissions' });
    assert.equal(res.status, 202, res.text);
    const { thread_id, conversation_id, run_id } = res.json();
    const socket = await live(thread_id);
    const events = await socket.until(ended);
    socket.close();
    const types = typesOf(events);
    const refused = events.find((e) => e.type === 'posture_refused');
    assert.ok(refused, `no posture_refused in ${types.join(', ')}`);
    assert.deepEqual({ ...refused.data, reason: undefined }, { run_id, conversation_id, part: 'mode', value: 'bypassPermissions', reason: undefined });
    assert.match(String(refused.data.reason), /refused/);
    assert.ok(types.indexOf('posture_refused') < types.indexOf('run_finished'), 'before the run ends');
    assert.equal(types.at(-2), 'run_finished');
    assert.match(replyOf(events), /mode=default model=sonnet/, 'the agent stayed in its own mode');
  });
});
