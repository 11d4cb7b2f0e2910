// The use cases over the memory adapters and fakes that keep the ports' contracts, with nothing of Node:
// this file imports only the core, the ports, the domain, the memory adapters and node:test/node:assert,
// so the same suite runs under Node (npm test), Deno, Bun and in Chromium (npm run test:runtimes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import { memoryDeliveryOutbox, type OutboxEntry } from '../../adapters/memory/delivery-outbox.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { agentVocabularies } from '../../core/agents/vocabularies.ts';
import { systemClock } from '../../core/clock.ts';
import { consoleReads } from '../../core/reads/console-reads.ts';
import { deliveryDispatcher } from '../../core/moves/delivery-dispatch.ts';
import { threadMoves } from '../../core/moves/moves.ts';
import { threadForks } from '../../core/forks/forks.ts';
import { directives } from '../../core/runs/directives.ts';
import { steerDelivery } from '../../core/runs/steer-delivery.ts';
import { emitter } from '../../core/runs/emit.ts';
import { backgroundTurns } from '../../core/runs/turns.ts';
import { PendingWaiters } from '../../core/runs/pending-waiters.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { Address } from '../../domain/model.ts';
import { ok } from '../../domain/result.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import type { AgentRunner, TurnRequest } from '../../ports/agent-runner.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Logger } from '../../ports/logger.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { manualClock } from '../support/manual-clock.ts';

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };
const offers: AgentOffers = async () => ({ kind: 'offered', offer: { modes: ['default', 'plan'], currentMode: 'default', models: ['opus', 'sonnet'], efforts: ['low', 'high'] } });
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Waits for `done`, looked at every 5 ms, for at most 5 s. */
const until = async (done: () => boolean | Promise<boolean>) => {
  for (let waited = 0; !(await done()) && waited < 5_000; waited += 5) await sleep(5);
  assert.ok(await done(), 'waited 5 s');
};
let ids = 0;
/** UUIDv7-shaped ids in order, from a counter: the core asks for ids through its port, never a package. */
const newId = () => {
  const n = (Date.now() * 1000 + (ids++ % 1000)).toString(16).padStart(12, '0').slice(-12);
  return `${n.slice(0, 8)}-${n.slice(8, 12)}-7000-8000-${(ids).toString(16).padStart(12, '0')}`;
};

/**
 * An agent runner as the port describes it: sessions it knows continue; any other starts fresh,
 * and a fresh one asks for the history brief and says so. What each prompt was is kept.
 */
function scriptedRunner(): AgentRunner & { prompts: string[]; forget(): void } {
  const sessions = new Map<string, number>();
  const prompts: string[] = [];
  return {
    prompts,
    forget: () => sessions.clear(),
    async runTurn(request: TurnRequest) {
      let id = request.sessionId;
      const fresh = id === null || !sessions.has(id);
      if (fresh) {
        id = `session-${sessions.size + 1}-${prompts.length}`;
        sessions.set(id, 0);
      }
      await request.onSession(id!);
      let prompt = request.prompt;
      if (fresh && request.history !== undefined) {
        const history = await request.history();
        if (history !== null) {
          await request.onBriefed?.();
          prompt = `${history}\n\n${prompt}`;
        }
      }
      prompts.push(prompt);
      const turn = sessions.get(id!)! + 1;
      sessions.set(id!, turn);
      await request.onUpdate({ kind: 'text', text: `turn=${turn}` });
      return { sessionId: id!, stopReason: 'end_turn' };
    },
    setMode: async () => null,
    steer: async () => 'unsupported' as const,
    close: async () => {},
  };
}

/** The core wired over memory: what src/app.ts does for Node, with nothing but the ports. */
async function core(channels?: (storage: ReturnType<typeof createMemoryStorage>) => ChannelPort) {
  const storage = createMemoryStorage();
  await storage.importWorld(fixtureWorld());
  const bus = createMemoryEventBus();
  const runner = scriptedRunner();
  const waiters = new PendingWaiters((pending) => storage.writer.pendingAnswers(pending));
  const emit = emitter(storage.events, bus);
  // The host's clock, as src/app.ts wires it: the memory storage's outbox keeps the host's time, and a
  // refused delivery is looked at again when it is due by both.
  const clock = systemClock;
  const turns = backgroundTurns({ writer: storage.writer, runner, emit, waiters, log: quiet, holder: 'core-test', leaseMs: 60_000, idleMs: 60_000, clock });
  const vocabularies = agentVocabularies(storage.catalog, offers);
  const port = channels?.(storage) ?? memoryChannelPort(storage.catalog);
  const deliveries = deliveryDispatcher({ outbox: storage.outbox, channels: port, log: quiet, holder: 'core-test', intervalMs: 20, retryMs: 10, maxRetryMs: 40, claimMs: 1_000, clock });
  const starting = { storage, vocabularies, bus, turns, runDirectory: async () => ok('projects/acme-web'), lease: { holder: 'core-test', ms: 60_000 } };
  const steering = steerDelivery({ bus, clock, newId, log: quiet, holder: 'core-test', local: turns.steer });
  const submit = directives({ ...starting, deliverSteer: steering.deliver });
  const moves = threadMoves({ ...starting, channels: port, deliveries, newId });
  const fork = threadForks({ storage, vocabularies, newId, submit });
  const reads = consoleReads(storage, vocabularies, { viewerOrigin: null, viewerPath: '/artifacts' });
  /** A thread's stored events, as a socket replays them. */
  const eventsOf = (thread: string): Promise<WireEvent[]> => storage.events.since(thread, 0, 1_000);
  // Asleep and released: the turn is released just after its last event is stored.
  const asleep = (thread: string, n: number) => async () =>
    (await eventsOf(thread)).filter((e) => e.type === 'reflex_asleep').length >= n && (await storage.writer.runningTurn(thread)) === null;
  const close = async () => {
    await deliveries.close();
    await turns.drain();
  };
  return { storage, runner, submit, moves, fork, reads, eventsOf, until, asleep, close };
}

const alice = { id: 'alice', name: 'Alice' };

describe('the use cases on memory, free of any runtime', () => {
  it('a directive opens a console thread and its run streams, from run_started to reflex_asleep', async () => {
    const c = await core();
    const answer = await c.submit(alice, 'key-1', { text: 'Hello', message_id: 'm1', model: 'claude:opus', project: 'acme-web', permission_mode: null, effort: null });
    assert.ok(answer.ok, JSON.stringify(answer));
    await c.until(c.asleep(answer.value.thread_id, 1));
    const types = (await c.eventsOf(answer.value.thread_id)).map((e) => e.type);
    assert.equal(types[0], 'message');
    assert.equal(types[1], 'run_started');
    assert.equal(types.at(-1), 'reflex_asleep');
    assert.equal(types.at(-2), 'run_finished');
    const again = await c.submit(alice, answer.value.thread_id, { text: 'Hello', message_id: 'm1', model: null, project: null, permission_mode: null, effort: null });
    assert.deepEqual(again, answer, 'a repeated message_id answers the first answer');
    const ledger = await c.reads.messages(alice, answer.value.thread_id, { limit: 10, before: null });
    assert.ok(ledger.ok);
    assert.deepEqual(ledger.value.items.map((m) => [m.role, m.text]).reverse(), [['user', 'Hello'], ['assistant', 'turn=1']]);
    await c.close();
  });

  it('a teleport moves the conversation and its session; the source refuses with conversation_moved; summon starts from the history', async () => {
    const posted: Delivery[] = [];
    let refusals = 1;
    const c = await core((storage) => ({
      ...memoryChannelPort(storage.catalog),
      async deliver(delivery) {
        if (refusals-- > 0) throw new Error('down');
        posted.push(delivery);
      },
    }));
    const first = await c.submit(alice, 'key-2', { text: 'Step one', message_id: null, model: 'claude:opus', project: 'acme-web', permission_mode: null, effort: null });
    assert.ok(first.ok);
    const source = first.value.thread_id;
    await c.until(c.asleep(source, 1));

    const moved = await c.moves.teleport(alice, source, { destination: { channel: 'team-chat', id: 'general' }, new_thread: true, prompt: null });
    assert.ok(moved.ok, JSON.stringify(moved));
    const refused = await c.submit(alice, source, { text: 'Still here?', message_id: null, model: null, project: null, permission_mode: null, effort: null });
    assert.ok(!refused.ok && refused.error.code === 'conversation_moved');
    await c.until(() => posted.length === 1);
    assert.equal(posted[0]!.place, 'general');

    const back = await c.moves.teleport(alice, moved.value.thread_id, { destination: { channel: 'console', id: 'new' }, new_thread: true, prompt: 'Step two' });
    assert.ok(back.ok, JSON.stringify(back));
    await c.until(c.asleep(back.value.thread_id, 1));
    assert.equal(c.runner.prompts.at(-1), 'Step two', 'the session continued: no brief');
    const home = await c.reads.messages(alice, back.value.thread_id, { limit: 20, before: null });
    assert.ok(home.ok);
    assert.ok(home.value.items.some((m) => m.text === 'turn=2'), 'the second turn of the same session');

    const summoned = await c.moves.summon(alice, back.value.thread_id, { route: 'codex', brief: 'Review it', hint: null });
    assert.ok(summoned.ok, JSON.stringify(summoned));
    await c.until(c.asleep(back.value.thread_id, 2));
    const prompt = c.runner.prompts.at(-1)!;
    assert.match(prompt, /\[user\] Step one/);
    assert.match(prompt, /Review it$/);
    await c.close();
  });

  it('a teleport posts people a short notice on the memory channel (title once, who moved it, the last exchange), never the agent brief', async () => {
    let port: ReturnType<typeof memoryChannelPort> | undefined;
    const c = await core((storage) => (port = memoryChannelPort(storage.catalog)));
    const first = await c.submit(alice, 'key-notice', { text: 'Make the **release** notes\nfor 2.0', message_id: null, model: 'claude:opus', project: 'acme-web', permission_mode: null, effort: null });
    assert.ok(first.ok);
    const source = first.value.thread_id;
    await c.until(c.asleep(source, 1));
    const title = (await c.storage.threads.findRow(alice.id, source))!.title;

    const moved = await c.moves.teleport(alice, source, { destination: { channel: 'team-chat', id: 'general' }, new_thread: true, prompt: null });
    assert.ok(moved.ok, JSON.stringify(moved));
    await c.until(() => port!.read('team-chat', 'general').length === 1);
    const [post] = port!.read('team-chat', 'general');
    assert.equal(post!.text.split('\n').filter((line) => line === title).length, 1, `the title heads it once: ${post!.text}`);
    assert.equal(post!.text, `${title}\n\nAlice moved the conversation here from Console.\nLast exchange:\nAsked: Make the release notes for 2.0\nclaude answered: turn=1`);
    assert.doesNotMatch(post!.text, /Context:|\[user\]|\[assistant\]|The new message follows/, 'no part of the agent brief');

    // Into an existing thread: no title heads the post, so the notice names it, once.
    const back = await c.moves.teleport(alice, moved.value.thread_id, { destination: { channel: 'team-chat', id: 'general/t1' }, new_thread: false, prompt: null });
    assert.ok(back.ok, JSON.stringify(back));
    await c.until(() => port!.read('team-chat', 'general/t1').length === 1);
    assert.equal(port!.read('team-chat', 'general/t1')[0]!.text,
      'Alice moved the conversation "Make the release notes" here from Team chat.\nLast exchange:\nAsked: Make the release notes for 2.0\nclaude answered: turn=1');

    // The agent's brief is unchanged: a fresh session still starts from the framed history.
    c.runner.forget();
    const console2 = await c.moves.teleport(alice, back.value.thread_id, { destination: { channel: 'console', id: 'new' }, new_thread: true, prompt: 'Carry on' });
    assert.ok(console2.ok, JSON.stringify(console2));
    await c.until(c.asleep(console2.value.thread_id, 1));
    assert.match(c.runner.prompts.at(-1)!, /^Context: this conversation continues a thread[^]*\[user\] Make the \*\*release\*\* notes\n  for 2\.0\n[^]*Carry on$/);
    await c.close();
  });

  it("a fork with text starts a fresh session whose prompt carries the history up to the cutoff, and nothing after it", async () => {
    const c = await core();
    const first = await c.submit(alice, 'key-fork', { text: 'Step one', message_id: null, model: 'claude:opus', project: 'acme-web', permission_mode: null, effort: null });
    assert.ok(first.ok);
    const source = first.value.thread_id;
    await c.until(c.asleep(source, 1));
    assert.ok((await c.submit(alice, source, { text: 'Step two', message_id: null, model: null, project: null, permission_mode: null, effort: null })).ok);
    await c.until(c.asleep(source, 2));
    const ledger = await c.reads.messages(alice, source, { limit: 10, before: null });
    assert.ok(ledger.ok);
    const reply = ledger.value.items.find((m) => m.text === 'turn=1')!;
    const refused = await c.fork(alice, source, { message_id: newId(), text: null, model: null });
    assert.ok(!refused.ok && refused.error.code === 'validation_failed');
    const forked = await c.fork(alice, source, { message_id: reply.id, text: 'Another way', model: 'claude:sonnet' });
    assert.ok(forked.ok, JSON.stringify(forked));
    await c.until(c.asleep(forked.value.thread_id, 1));
    const prompt = c.runner.prompts.at(-1)!;
    assert.match(prompt, /\[user\] Step one\n\[assistant\] turn=1\n/);
    assert.doesNotMatch(prompt, /Step two/, 'nothing past the cutoff');
    assert.match(prompt, /Another way$/);
    const own = await c.reads.messages(alice, forked.value.thread_id, { limit: 20, before: null });
    assert.ok(own.ok);
    assert.deepEqual(own.value.items.filter((m) => m.role !== 'system').map((m) => m.text).reverse(), ['Step one', 'turn=1', 'Another way', 'turn=1'], 'a new session: its first turn');
    const [conversation] = await c.storage.conversations.listByThread(forked.value.thread_id);
    assert.equal(conversation!.model, 'sonnet');
    await c.close();
  });

  it('a channel that never answers is given up on within a third of the claim; the delivery goes on a later try; closing does not wait for it', async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    // The outbox and the dispatcher on one clock, moved by hand: a claim's deadline and a retry's wait pass when the test says.
    const clock = manualClock();
    const entries = new Map<string, OutboxEntry>();
    const outbox = memoryDeliveryOutbox(entries, clock.now);
    const calls: string[] = [];
    const channels: ChannelPort = {
      ...memoryChannelPort(storage.catalog),
      deliver: (delivery) => {
        calls.push(delivery.id);
        // The first call hangs for good, as a platform that accepted the connection and went silent.
        return calls.length === 1 ? new Promise<void>(() => {}) : Promise.resolve();
      },
    };
    const dispatcher = deliveryDispatcher({ outbox, channels, log: quiet, holder: 'core-test', intervalMs: 10, retryMs: 10, maxRetryMs: 20, claimMs: 90, clock });
    const id = newId();
    // A move's write puts the delivery in the outbox; the memory outbox takes it directly here.
    outbox.enqueue({
      id, channel: 'team-chat', place: 'general', new_thread: true, address: { channel: 'team-chat', id: `general/${id}` }, title: 'T', text: 'moved',
    });
    dispatcher.poke();
    await until(() => calls.length === 1);
    // A third of the claim (30 ms) without an answer: given up on, due again after the first retry's wait (10 ms).
    await clock.advance(29);
    assert.equal(entries.get(id)?.delivery.attempts, 0, 'not given up on before a third of the claim');
    await clock.advance(1);
    assert.equal(entries.get(id)?.delivery.attempts, 1, 'put back, its refused attempt counted');
    // The next look (every 10 ms) finds it due, and the channel takes it.
    await clock.advance(10);
    await until(() => calls.length === 2);
    assert.deepEqual(calls, [id, id], 'asked again after the silent call was given up on');
    await until(() => entries.size === 0);
    assert.deepEqual(await outbox.claimDue('test', 1_000, 10), [], 'taken on the second try, and removed');
    const closing = Date.now();
    await dispatcher.close();
    assert.ok(Date.now() - closing < 1_000, 'closing waited for no hung call');
  });

  it('a delivery the platform landed elsewhere moves its address there before it is let go; a failed move leaves it to be retried; one landed where decided moves nothing', async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const clock = manualClock();
    const entries = new Map<string, OutboxEntry>();
    const outbox = memoryDeliveryOutbox(entries, clock.now);
    const calls: string[] = [];
    const landed = { channel: 'team-chat', id: 'general/1700000000.000100' };
    const channels: ChannelPort = {
      ...memoryChannelPort(storage.catalog),
      deliver: async (delivery) => {
        calls.push(`deliver ${delivery.id}`);
        return delivery.new_thread ? { address: landed } : { address: delivery.address };
      },
    };
    let failMove = true;
    const landAt = async (from: Address, to: Address) => {
      calls.push(`land ${from.id} ${to.id}`);
      if (failMove) throw new Error('storage went away');
    };
    const dispatcher = deliveryDispatcher({ outbox, channels, log: quiet, holder: 'core-test', intervalMs: 10, retryMs: 10, maxRetryMs: 20, claimMs: 90, clock, landAt });
    const id = newId();
    outbox.enqueue({ id, channel: 'team-chat', place: 'general', new_thread: true, address: { channel: 'team-chat', id: `general/${id}` }, title: 'T', text: 'moved' });
    dispatcher.poke();
    await until(() => entries.get(id)?.delivery.attempts === 1);
    assert.deepEqual(calls, [`deliver ${id}`, `land general/${id} ${landed.id}`], 'the move asked for once the channel answered');
    failMove = false;
    await clock.advance(10);
    await until(() => entries.size === 0);
    assert.deepEqual(calls.slice(2), [`deliver ${id}`, `land general/${id} ${landed.id}`], 'asked again, moved, then let go');
    const reply = newId();
    outbox.enqueue({ id: reply, channel: 'team-chat', place: 'general/t1', new_thread: false, address: { channel: 'team-chat', id: 'general/t1' }, title: '', text: 'a reply' });
    dispatcher.poke();
    await until(() => entries.size === 0);
    assert.deepEqual(calls.slice(4), [`deliver ${reply}`], 'landed where decided: nothing to move');
    await dispatcher.close();
  });
});
