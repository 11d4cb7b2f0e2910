import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState, type MemoryState } from '../../adapters/memory/state.ts';
import type { AgentRunner, TurnRequest } from '../../ports/agent-runner.ts';
import { emitter } from '../../core/runs/emit.ts';
import { backgroundTurns } from '../../core/runs/turns.ts';
import { PendingWaiters } from '../../core/runs/pending-waiters.ts';
import { sweeper } from '../../core/runs/sweeper.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { manualClock, type ManualClock } from '../support/manual-clock.ts';

/** Waits for `done`, looked at every few milliseconds, for at most 5 s. */
async function until(done: () => boolean, what: string): Promise<void> {
  for (const end = Date.now() + 5_000; !done(); await new Promise((resolve) => setTimeout(resolve, 5))) {
    if (Date.now() > end) assert.fail(`${what}: not within 5 s`);
  }
}

/**
 * A runner whose turn streams a word (then it is `working`), then ends once `ms` have passed on the
 * clock, or when cancelled, as an agent would; without `ms`, only when cancelled.
 */
function slowRunner(clock: ManualClock, ms?: number): AgentRunner & { working: boolean; cancelled: boolean } {
  const runner = {
    working: false,
    cancelled: false,
    async runTurn(request: TurnRequest) {
      await request.onSession('session-1');
      await request.onUpdate({ kind: 'text', text: 'working' });
      runner.working = true;
      await new Promise<void>((resolve) => {
        const done = ms === undefined ? () => {} : clock.after(ms, resolve);
        request.signal?.addEventListener('abort', () => {
          runner.cancelled = true;
          done();
          resolve();
        });
      });
      return { sessionId: 'session-1', stopReason: request.signal?.aborted ? 'cancelled' : 'end_turn' };
    },
    setMode: async () => null,
    steer: async () => 'unsupported' as const,
    close: async () => {},
  };
  return runner;
}

/**
 * Every turn's lease lapses in storage. The memory adapter keeps its own time (the host's), so the
 * expiry is moved into the past rather than waited for.
 */
function lapse(state: MemoryState): void {
  for (const turn of state.turns.values()) turn.expires = 0;
}

/** Memory storage with the fixture world, and a new console thread whose directive claimed its turn under `lease`. */
async function claimedTurn(lease: { holder: string; ms: number }) {
  const state = emptyState();
  const storage = createMemoryStorage(state);
  await storage.importWorld(fixtureWorld());
  const emit = emitter(storage.events, createMemoryEventBus());
  const t = await storage.writer.createConsoleThread({
    owner: 'alice', key: randomUUID(), project: null, title: 't', conversation: { agent: 'claude', model: 'opus', permission_mode: null, effort: null },
  });
  const started = await storage.writer.writeDirective({
    thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: null, author: 'alice', text: 'x', directory: null, permission_mode: null, lease,
  });
  assert.ok(started.kind === 'started');
  return { storage, state, emit, t, started };
}

/**
 * A turn whose instance cannot renew its lease (a database blip) while another instance sweeps the
 * turn: the run ends once, with one terminal event and one reflex_asleep, and the turn stops its agent.
 */
describe('a turn that loses its lease', () => {
  it('never ends a run a sweeper has ended, and stops its agent', { timeout: 10_000 }, async () => {
    const log = pino({ level: 'silent' });
    const leaseMs = 300;
    const clock = manualClock();
    const { storage, state, emit, t, started } = await claimedTurn({ holder: 'A', ms: leaseMs });
    // Instance A cannot renew: its database connection is failing.
    const failing = { ...storage.writer, renewTurns: async () => { throw new Error('connection terminated'); } };
    const runner = slowRunner(clock);
    const turns = backgroundTurns({ writer: failing, runner, emit, waiters: new PendingWaiters(), log, holder: 'A', leaseMs, idleMs: 60_000, clock });
    turns.start({ threadId: t.thread.id, conversation: t.conversation, run: started.run, agent: { id: 'claude' } as never, prompt: 'x', cwd: '/tmp', mode: null });
    await until(() => runner.working, 'the agent at work');
    // Instance B sweeps once the lease has lapsed.
    lapse(state);
    const other = sweeper({ writer: storage.writer, emit, log, holder: 'B', leaseMs, clock, runsHere: () => false });
    assert.equal(await other.sweep(), 1);
    // A, unrenewed for more than a whole lease (renewals every third of it, each failing), gives the run up.
    await clock.advance(leaseMs + leaseMs / 3);
    await turns.drain();
    const events = (await storage.events.since(t.thread.id, 0, 100)).filter((e) => e.data.run_id === started.run.id);
    const ends = events.filter((e) => ['run_finished', 'run_error', 'run_cancelled'].includes(e.type));
    assert.deepEqual(ends.map((e) => e.type), ['run_error'], events.map((e) => e.type).join(', '));
    assert.equal(events.filter((e) => e.type === 'reflex_asleep').length, 1);
    assert.equal(events.at(-1)!.type, 'reflex_asleep');
    assert.ok(runner.cancelled, 'the agent was stopped');
    const run = (await storage.conversations.runsPage(t.thread.id, t.conversation.id, { limit: 10, before: null }))!.items[0]!;
    assert.match(run.error!, /^turn_lease_expired: /);
  });

  it("an instance's own sweeper leaves the turns it still runs alone", async () => {
    const log = pino({ level: 'silent' });
    const { storage, state, emit, t, started } = await claimedTurn({ holder: 'A', ms: 60_000 });
    lapse(state);
    const own = sweeper({ writer: storage.writer, emit, log, holder: 'A', leaseMs: 60_000, clock: manualClock(), runsHere: (id) => id === started.run.id });
    assert.equal(await own.sweep(), 0);
    assert.equal((await storage.writer.runningTurn(t.thread.id))?.run_id, started.run.id, 'still running, lease renewed by the claim');
  });
});

/** A logger whose lines are kept, parsed, for assertions. */
function keptLog() {
  const lines: { level: number; msg: string }[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { log, warnings: () => lines.filter((line) => line.level >= 40).map((line) => line.msg) };
}

// Issue 24: a run that had just succeeded logged "the turn lease was lost": a renewal that ran after the
// turn's release was stored, but before the turn learned it, found the turn gone and took that for a loss.
describe('the end of a turn and its lease', () => {
  it('a turn that ends normally logs no lost lease, even when a renewal meets its release', { timeout: 10_000 }, async () => {
    const { log, warnings } = keptLog();
    const leaseMs = 300; // renewed every 100 ms
    const clock = manualClock();
    const { storage, emit, t, started } = await claimedTurn({ holder: 'A', ms: leaseMs });
    let renewalsAfterRelease = 0;
    let released = false;
    let answerHandOver = () => {};
    const handOverAnswered = new Promise<void>((resolve) => (answerHandOver = resolve));
    const writer = {
      ...storage.writer,
      renewTurns: async (holder: string, ids: readonly string[], ms: number) => {
        if (released) renewalsAfterRelease += 1;
        return storage.writer.renewTurns(holder, ids, ms);
      },
      // The release (the hand-over) is stored at once, and its answer comes back late (a slow connection): a renewal runs meanwhile.
      handOverTurn: async (id: string, lease: { holder: string; ms: number }) => {
        const next = await storage.writer.handOverTurn(id, lease);
        released = true;
        await handOverAnswered;
        return next;
      },
    };
    const runner = slowRunner(clock, 50);
    const turns = backgroundTurns({ writer, runner, emit, waiters: new PendingWaiters(), log, holder: 'A', leaseMs, idleMs: 60_000, clock });
    turns.start({ threadId: t.thread.id, conversation: t.conversation, run: started.run, agent: { id: 'claude' } as never, prompt: 'x', cwd: '/tmp', mode: null });
    await until(() => runner.working, 'the agent at work');
    await clock.advance(50);
    await until(() => released, 'the release stored');
    // The next renewal comes round while the release's answer is still on its way, and finds the turn gone.
    await clock.advance(leaseMs / 3);
    assert.ok(renewalsAfterRelease > 0, 'a renewal met the release');
    answerHandOver();
    await turns.drain();
    assert.deepEqual(warnings(), []);
    const run = (await storage.conversations.runsPage(t.thread.id, t.conversation.id, { limit: 10, before: null }))!.items[0]!;
    assert.equal(run.status, 'succeeded');
  });

  it('a lease really lost while the turn runs still warns, and stops the agent', { timeout: 10_000 }, async () => {
    const { log, warnings } = keptLog();
    const leaseMs = 300;
    const clock = manualClock();
    const { storage, emit, t, started } = await claimedTurn({ holder: 'A', ms: leaseMs });
    const runner = slowRunner(clock);
    const turns = backgroundTurns({ writer: storage.writer, runner, emit, waiters: new PendingWaiters(), log, holder: 'A', leaseMs, idleMs: 60_000, clock });
    turns.start({ threadId: t.thread.id, conversation: t.conversation, run: started.run, agent: { id: 'claude' } as never, prompt: 'x', cwd: '/tmp', mode: null });
    await until(() => runner.working, 'the agent at work');
    // Another instance took this one for dead and swept the turn: it ended the run and let the turn go.
    await storage.writer.finishRun(started.run.id, 'failed', 'turn_lease_expired: swept');
    await storage.writer.releaseTurn(started.run.id);
    // The next renewal finds the turn gone.
    await clock.advance(leaseMs / 3);
    await turns.drain();
    assert.ok(runner.cancelled, 'the agent was stopped');
    assert.deepEqual(warnings(), ['the turn lease was lost; stopping the run here']);
  });
});
