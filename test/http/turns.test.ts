import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { WireEvent } from '../../domain/events.ts';
import { ok } from '../../domain/result.ts';
import { connectLive, typesOf, type LiveClient } from '../support/live-client.ts';
import { startFixtureService, type TestService } from '../support/service.ts';
import { databaseSkip } from '../support/storage-kinds.ts';
import { builtDemoAgent } from '../support/built.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');
const has = (type: string) => (events: readonly WireEvent[]) => events.some((e) => e.type === type);

/** Cancel, the idle time-out, and agent output the database cannot store: no turn is ever stranded. */
describe('turns end: cancel, idle agents, garbled output', () => {
  let service: TestService;
  before(async () => {
    service = await startFixtureService({ AGENT_IDLE_TIMEOUT_MS: '1500' });
  });
  after(() => service.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = ALICE) =>
    service.ask({ method: 'POST', path, headers, body: JSON.stringify(body) });
  const get = (path: string) => service.ask({ path, headers: ALICE });
  /** A new console thread running `text`; answers its ids and a socket on it. */
  const start = async (text: string) => {
    const key = randomUUID();
    const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const res = await post(`${P}/${key}/directives`, { text, model: 'claude:opus', project: 'acme-web' });
    assert.equal(res.status, 202, res.text);
    return { ...(res.json() as { thread_id: string; conversation_id: string; run_id: string }), socket };
  };
  const runOf = async (t: { thread_id: string; conversation_id: string }) =>
    (await get(`${P}/${t.thread_id}/conversations/${t.conversation_id}/runs`)).json().items[0];

  it('cancel of a running turn: 202 with its run, run_cancelled then reflex_asleep, status cancelled, the thread free again', async () => {
    const t = await start('Wait for me [wait]');
    await t.socket.until(has('run_started'));
    const res = await post(`${P}/${t.thread_id}/cancel`, {});
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.json(), { run_id: t.run_id });
    const events = await t.socket.until(asleep);
    const types = typesOf(events);
    assert.deepEqual(types.slice(-2), ['run_cancelled', 'reflex_asleep']);
    assert.ok(!types.includes('run_error') && !types.includes('run_finished'));
    const run = await runOf(t);
    assert.equal(run.status, 'cancelled');
    assert.equal(run.error, 'cancelled: cancelled by a user');
    const none = await post(`${P}/${t.thread_id}/cancel`, {});
    assert.equal(none.status, 409, 'nothing runs any more');
    assert.equal(none.json().code, 'no_turn_running');
    const next = await post(`${P}/${t.thread_id}/directives`, { text: 'Again' });
    assert.equal(next.status, 202, next.text);
    await t.socket.until((e) => e.filter((x) => x.type === 'reflex_asleep').length === 2);
    t.socket.close();
  });

  it('cancel of a turn waiting on an approval: the ask is answered cancelled and leaves /pending', async () => {
    const t = await start('Ask first [approval]');
    await t.socket.until(has('approval_requested'));
    assert.equal((await get(`${P}/${t.thread_id}/pending`)).json().length, 1);
    // A member may cancel as well as answer; bob is not one here, so he sees no thread at all.
    assert.equal((await post(`${P}/${t.thread_id}/cancel`, {}, BOB)).status, 404);
    assert.equal((await post(`${P}/${t.thread_id}/cancel`, {})).status, 202);
    const events = await t.socket.until(asleep);
    assert.ok(events.some((e) => e.type === 'message' && String(e.data.delta ?? '').includes('Permission: cancelled')), 'the agent was told');
    assert.deepEqual(typesOf(events).slice(-2), ['run_cancelled', 'reflex_asleep']);
    assert.deepEqual((await get(`${P}/${t.thread_id}/pending`)).json(), []);
    assert.equal((await runOf(t)).status, 'cancelled');
    t.socket.close();
  });

  it('an agent that stays silent past the idle time-out is cancelled; one that ignores cancel is stopped', async () => {
    const t = await start('Never answer [hang]');
    const events = await t.socket.until(asleep, 20_000);
    assert.deepEqual(typesOf(events).slice(-2), ['run_cancelled', 'reflex_asleep']);
    const run = await runOf(t);
    assert.equal(run.status, 'cancelled');
    assert.match(run.error, /^agent_idle: the agent sent nothing for 2 s/);
    // The next turn runs on a fresh agent process. `reflex_asleep` is stored just before the turn is released:
    // a directive sent on seeing it may find the turn still held, so it queues (it runs at once on an idle thread).
    const next = await post(`${P}/${t.thread_id}/directives`, { text: 'Still there?', when_busy: 'queue' });
    assert.equal(next.status, 202, next.text);
    const after = await t.socket.until((e) => e.filter((x) => x.type === 'reflex_asleep').length === 2);
    assert.equal(after.at(-2)!.type, 'run_finished');
    t.socket.close();
  });

  it('agent output with NULs and a surrogate pair split across chunks is stored repaired, and the run succeeds', async () => {
    const t = await start('Garble it [garbled]');
    const events = await t.socket.until(asleep);
    t.socket.close();
    assert.equal(events.at(-2)!.type, 'run_finished');
    const deltas = events.filter((e) => typeof e.data.delta === 'string').map((e) => e.data.delta as string).join('');
    assert.ok(deltas.includes('split \u{1F600} pair'), 'the pair is joined again across chunks');
    assert.ok(deltas.includes('a NUL \uFFFD here'));
    const tool = events.find((e) => e.type === 'tool_call' && String(e.data.id).startsWith('nul-'));
    assert.equal(tool!.data.title, 'bad \uFFFD title \uFFFD');
    const ledger = (await get(`${P}/${t.thread_id}/messages`)).json();
    assert.ok(ledger.items[0].text.includes('split \u{1F600} pair, a NUL \uFFFD here'));
    assert.equal((await runOf(t)).status, 'succeeded');
  });

  it('text PostgreSQL cannot store is refused with 422 and writes nothing: directive, summon', async () => {
    const key = randomUUID();
    for (const raw of ['{"text":"hi \\ud800"}', '{"text":"x \\udc00 y"}', '{"text":"nul \\u0000"}']) {
      const res = await service.ask({ method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: raw });
      assert.equal(res.status, 422, raw);
    }
    assert.equal((await get(`${P}`)).json().items.some((thread: { key: string }) => thread.key === key), false, 'no thread was written');
    const t = await start('Idle thread');
    await t.socket.until(asleep);
    const before = (await get(`${P}/${t.thread_id}/messages`)).json().items.length;
    for (const raw of ['{"route":"codex","brief":"x \\udc00"}', '{"route":"codex","brief":"ok","hint":"\\ud83d"}']) {
      const res = await service.ask({ method: 'POST', path: `${P}/${t.thread_id}/summon`, headers: ALICE, body: raw });
      assert.equal(res.status, 422, raw);
    }
    assert.equal((await get(`${P}/${t.thread_id}/messages`)).json().items.length, before);
    assert.equal((await get(`${P}/${t.thread_id}/conversations`)).json().length, 1);
    assert.equal((await post(`${P}/${t.thread_id}/directives`, { text: 'Still works' })).status, 202);
    await t.socket.until((e) => e.filter((x) => x.type === 'reflex_asleep').length === 2);
    t.socket.close();
  });
});

describe('the turn is released last', () => {
  it("only after the turn's last event (reflex_asleep) is stored, so no directive slips in before it", async () => {
    const { createMemoryStorage } = await import('../../adapters/memory/storage.ts');
    const { fixtureWorld } = await import('../support/fixture-world.ts');
    const { startService } = await import('../support/service.ts');
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const order: string[] = [];
    const append = storage.events.append;
    const release = storage.writer.handOverTurn;
    const recorded = {
      ...storage,
      events: { ...storage.events, append: async (...args: Parameters<typeof append>) => (order.push(`event:${args[1]}`), append(...args)) },
      writer: { ...storage.writer, handOverTurn: async (...args: Parameters<typeof release>) => (order.push('release'), release(...args)) },
    };
    const service = await startService({}, { storage: recorded });
    try {
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
      const res = await service.ask({ method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Hi', model: 'claude:opus' }) });
      assert.equal(res.status, 202);
      await socket.until(asleep);
      // The release follows the last event's store: waited for, for at most 5 s.
      for (const end = Date.now() + 5_000; !order.includes('release') && Date.now() < end;) await new Promise((resolve) => setTimeout(resolve, 5));
      socket.close();
      assert.deepEqual(order.slice(-3), ['event:run_finished', 'event:reflex_asleep', 'release']);
    } finally {
      await service.close();
    }
  });
});

describe('cancel on a shared agent process', () => {
  it("a cancelled turn that ignores the cancel is given up without ending other threads' turns on the same agent", async () => {
    const { createMemoryStorage } = await import('../../adapters/memory/storage.ts');
    const { createAcpAgentRunner } = await import('../../adapters/acp/agent-runner.ts');
    const { fixtureWorld } = await import('../support/fixture-world.ts');
    const { startService } = await import('../support/service.ts');
    const { default: pino } = await import('pino');
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), env: process.env, cancelGraceMs: 300 });
    const service = await startService({}, { storage, runner });
    try {
      const start = async (text: string) => {
        const key = randomUUID();
        const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
        const res = await service.ask({ method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: JSON.stringify({ text, model: 'claude:opus' }) });
        assert.equal(res.status, 202, res.text);
        await socket.until(has('run_started'));
        return { socket, thread: res.json().thread_id as string };
      };
      const stuck = await start('Ignore cancels [hang]');
      const busy = await start('Keep going [slow]');
      assert.equal((await service.ask({ method: 'POST', path: `${P}/${stuck.thread}/cancel`, headers: ALICE })).status, 202);
      assert.deepEqual(typesOf(await stuck.socket.until(asleep)).slice(-2), ['run_cancelled', 'reflex_asleep']);
      const other = await busy.socket.until(asleep);
      assert.equal(other.at(-2)!.type, 'run_finished', 'the other thread on the same agent process was not ended');
      stuck.socket.close();
      busy.socket.close();
    } finally {
      await service.close();
    }
  });
});

describe('racing first directives', () => {
  it('the loser of two first directives for one key continues only when its picks match; else 409 naming the pick', async () => {
    const { createMemoryStorage } = await import('../../adapters/memory/storage.ts');
    const { createMemoryEventBus } = await import('../../adapters/memory/event-bus.ts');
    const { directives } = await import('../../core/runs/directives.ts');
    const { fixtureWorld } = await import('../support/fixture-world.ts');
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const started: string[] = [];
    const { agentVocabularies } = await import('../../core/agents/vocabularies.ts');
    const { fakeAgentOffers } = await import('../support/fake-agent-offers.ts');
    // What the fixture's claude is served with (the demo agent's Claude profile); no agent process is needed here.
    const claude = { modes: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'], currentMode: 'default', models: ['opus', 'sonnet', 'haiku'], efforts: ['low', 'medium', 'high'] };
    const submit = directives({
      storage, bus: createMemoryEventBus(), runDirectory: async () => ok('projects/console-race'), lease: { holder: 'h', ms: 60_000 },
      vocabularies: agentVocabularies(storage.catalog, fakeAgentOffers({ claude, codex: 'broken' })),
      turns: { start: (request: { run: { id: string } }) => void started.push(request.run.id) } as never,
      deliverSteer: async () => 'unreached' as const,
    });
    const alice = { id: 'alice', name: 'Alice' };
    const body = { text: 'Hi', message_id: null, model: 'claude:opus', project: 'acme-web', permission_mode: null, effort: null };
    const key = randomUUID();
    const [first, second] = await Promise.all([
      submit(alice, key, { ...body, permission_mode: 'plan' }),
      submit(alice, key, { ...body, permission_mode: 'acceptEdits' }),
    ]);
    assert.ok(first.ok, JSON.stringify(first));
    assert.ok(!second.ok && second.error.code === 'first_directive_raced');
    assert.match(second.error.detail!, /permission mode plan/);
    const otherKey = randomUUID();
    const [a, b] = await Promise.all([submit(alice, otherKey, { ...body, message_id: 'm1' }), submit(alice, otherKey, { ...body, message_id: 'm1' })]);
    assert.ok(a.ok && b.ok, 'matching picks and one message_id: the loser answers the first answer again');
    assert.deepEqual(a.value, b.value);
    assert.equal(started.length, 2, 'one run per thread');
  });
});

describe('garbled agent output on embedded PostgreSQL', { skip: databaseSkip() }, () => {
  it('is stored repaired: the run succeeds and the thread stays free (where PostgreSQL refused it before)', async () => {
    const { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } = await import('../../adapters/embedded/pglite-server.ts');
    const { createMikroOrmStorage } = await import('../../adapters/mikro-orm/storage.ts');
    const { fixtureWorld } = await import('../support/fixture-world.ts');
    const { startService } = await import('../support/service.ts');
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
    const service = await startService({}, { storage });
    try {
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
      const res = await service.ask({ method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Garble it [garbled]', model: 'claude:opus' }) });
      assert.equal(res.status, 202, res.text);
      const events = await socket.until(asleep);
      assert.equal(events.at(-2)!.type, 'run_finished', events.map((e) => e.type).join(', '));
      const thread = res.json().thread_id;
      const ledger = (await service.ask({ path: `${P}/${thread}/messages`, headers: ALICE })).json();
      assert.ok(ledger.items[0].text.includes('split \u{1F600} pair, a NUL \uFFFD here'));
      const next = await service.ask({ method: 'POST', path: `${P}/${thread}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Again' }) });
      assert.equal(next.status, 202, next.text);
      await socket.until((e) => e.filter((x) => x.type === 'reflex_asleep').length === 2);
      socket.close();
    } finally {
      await service.close();
      await server.close();
    }
  });
});
