// Steering's use case and its delivery across instances (contract section 11), over fakes and a clock moved by hand:
// what is sent is never queued too, what was not sent is queued, a retry is never sent again, and a steer reaches the
// instance holding the turn (or is answered `unreached`, nothing sent, when none took it in time).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { turnSteerer } from '../../core/runs/steer.ts';
import { steerDelivery, type DeliverSteer, type SteerRequest } from '../../core/runs/steer-delivery.ts';
import type { TurnStart } from '../../core/runs/directives.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { Conversation, Thread } from '../../domain/model.ts';
import { ok } from '../../domain/result.ts';
import type { SteerOutcome } from '../../ports/agent-runner.ts';
import type { DirectiveAnswer, SteeredWrite } from '../../ports/directive-writes.ts';
import type { SteerAnswer } from '../../ports/event-bus.ts';
import type { RunningTurn } from '../../ports/turn-leases.ts';
import { manualClock } from '../support/manual-clock.ts';

const quiet = { info: () => {}, warn: () => {}, error: () => {} };
const THREAD = { id: 't1', key: 'k1', owner: 'alice' } as Thread;
const CONVERSATION = { id: 'c1', thread_id: 't1', agent: 'claude' } as Conversation;
const turn = (text: string, message_id: string | null = null): TurnStart => ({
  thread: THREAD, conversation: CONVERSATION, agent: { id: 'claude' } as TurnStart['agent'], text, message_id, author: 'alice', permission_mode: null, opened: false,
});

/** The directive writes and the running turn, as a tiny model: answers kept by message id, steered writes listed. */
function fakeWriter(running: RunningTurn | null) {
  const kept = new Map<string, { author: string; answer: DirectiveAnswer }>();
  const steered: SteeredWrite[] = [];
  return {
    steered,
    runningTurn: async () => running,
    keptAnswer: async (_thread: string, messageId: string, author: string) => {
      const seen = kept.get(messageId);
      if (seen === undefined) return null;
      return seen.author === author ? { kind: 'repeated' as const, answer: seen.answer } : { kind: 'message_id_taken' as const };
    },
    writeSteered: async (write: SteeredWrite) => {
      steered.push(write);
      const answer = { thread_id: write.thread_id, key: 'k1', conversation_id: write.conversation_id, run_id: write.run_id, steered: true as const };
      if (write.message_id !== null) kept.set(write.message_id, { author: write.author, answer });
      const event: WireEvent = { seq: steered.length, type: 'steered', thread_id: write.thread_id, at: '', data: { run_id: write.run_id } };
      return { kind: 'steered' as const, answer, message: { id: 'm', role: 'user', text: write.text, artifact_id: null, created_at: '', origin: null }, event };
    },
  };
}

/** A steerer over fakes: what was delivered, and what fell back to the queue. */
function steerer(answer: SteerAnswer, running: RunningTurn | null = { run_id: 'r1', conversation_id: 'c1', holder: 'h1' }) {
  const writer = fakeWriter(running);
  const delivered: SteerRequest[] = [];
  const queued: TurnStart[] = [];
  const deliver: DeliverSteer = async (steer) => {
    delivered.push(steer);
    return answer;
  };
  const steer = turnSteerer({
    writer, bus: createMemoryEventBus(), deliver,
    startTurn: async (t: TurnStart) => {
      queued.push(t);
      return ok({ thread_id: 't1', key: 'k1', conversation_id: 'c1', queued: { id: 'q1', position: 1 } });
    },
  });
  return { steer, writer, delivered, queued };
}

describe('steering a running turn (the use case)', () => {
  for (const taken of ['injected', 'other'] as const) {
    it(`${taken}: the ledger message is written with the running run's id, and nothing is queued`, async () => {
      const s = steerer(taken);
      const answer = await s.steer(turn('mind the tests'));
      assert.deepEqual(answer, ok({ thread_id: 't1', key: 'k1', conversation_id: 'c1', run_id: 'r1', steered: true }));
      assert.deepEqual(s.writer.steered.map((w) => [w.run_id, w.text]), [['r1', 'mind the tests']]);
      assert.deepEqual(s.delivered.map((d) => [d.run_id, d.holder]), [['r1', 'h1']]);
      assert.equal(s.queued.length, 0);
    });
  }

  for (const untaken of ['promptRequired', 'unsupported', 'asking', 'unreached'] as const) {
    it(`${untaken}: queued as when_busy queue, answered steered false, nothing written as steered`, async () => {
      const s = steerer(untaken);
      const answer = await s.steer(turn('later'));
      assert.deepEqual(answer, ok({ thread_id: 't1', key: 'k1', conversation_id: 'c1', queued: { id: 'q1', position: 1 }, steered: false }));
      assert.deepEqual(s.queued.map((t) => [t.text, t.when_busy]), [['later', { mode: 'queue', author: 'alice' }]]);
      assert.equal(s.writer.steered.length, 0);
    });
  }

  it('no turn running, or one on another conversation (a summon replaced it): queued, never delivered', async () => {
    for (const running of [null, { run_id: 'r9', conversation_id: 'c2', holder: 'h1' }]) {
      const s = steerer('injected', running);
      assert.equal((await s.steer(turn('x'))).ok, true);
      assert.deepEqual([s.delivered.length, s.queued.length], [0, 1]);
    }
  });

  it('a retry with the same message_id answers the first answer and is never sent again; another user\'s is message_id_taken', async () => {
    const s = steerer('injected');
    const first = await s.steer(turn('once', 'm1'));
    const again = await s.steer(turn('once', 'm1'));
    assert.deepEqual(again, first);
    assert.equal(s.delivered.length, 1);
    const bob = await s.steer({ ...turn('once', 'm1'), author: 'bob' });
    assert.deepEqual(bob, { ok: false, error: { code: 'message_id_taken' } });
    assert.equal(s.delivered.length, 1);
  });
});

describe('steering across instances (the delivery)', () => {
  /** Two instances on one bus: `a` asks; `b` holds the turn and answers with `answer` (or runs nothing: null). */
  function pair(answer: SteerOutcome | 'asking' | null, clocks = { a: manualClock(), b: manualClock() }) {
    const bus = createMemoryEventBus();
    const sentOnB: string[] = [];
    const a = steerDelivery({ bus, clock: clocks.a, newId: (() => { let n = 0; return () => `req-${n++}`; })(), log: quiet, holder: 'A', local: async () => null });
    const b = steerDelivery({
      bus, clock: clocks.b, newId: () => 'unused', log: quiet, holder: 'B',
      local: async (_run, text) => {
        if (answer !== null) sentOnB.push(text);
        return answer;
      },
    });
    bus.onSignal(a.onSignal);
    bus.onSignal(b.onSignal);
    return { a, b, sentOnB, clocks };
  }

  it('reaches the holder, and answers what the holder answered', async () => {
    const p = pair('injected');
    assert.equal(await p.a.deliver({ run_id: 'r1', holder: 'B', text: 'hi', message_id: null }), 'injected');
    assert.deepEqual(p.sentOnB, ['hi']);
  });

  it('the holder no longer runs the turn (it is ending there): promptRequired, nothing sent', async () => {
    const p = pair(null);
    assert.equal(await p.a.deliver({ run_id: 'r1', holder: 'B', text: 'hi', message_id: null }), 'promptRequired');
  });

  it('a holder of its own: steered here, never over the bus', async () => {
    const p = pair('injected');
    assert.equal(await p.b.deliver({ run_id: 'r1', holder: 'B', text: 'local', message_id: null }), 'injected');
    assert.deepEqual(p.sentOnB, ['local']);
  });

  it('no instance answers: unreached once the deadline and the answer time have passed (then it is queued)', async () => {
    const p = pair('injected');
    const answer = p.a.deliver({ run_id: 'r1', holder: 'gone', text: 'lost?', message_id: null });
    // Once the asker waits for its answer.
    while (p.clocks.a.scheduled === 0) await new Promise((resolve) => setTimeout(resolve, 0));
    await p.clocks.a.advance(3_000 + 15_000 - 1);
    assert.equal(p.clocks.a.scheduled, 1, 'still waiting');
    await p.clocks.a.advance(1);
    assert.equal(await answer, 'unreached');
    assert.deepEqual(p.sentOnB, [], 'the instance that does not hold the turn sent nothing');
  });

  it('a request that reaches the holder after its deadline is not sent: unreached', async () => {
    // B's clock is past A's deadline when the request arrives.
    const p = pair('injected', { a: manualClock(0), b: manualClock(10_000) });
    assert.equal(await p.a.deliver({ run_id: 'r1', holder: 'B', text: 'late', message_id: null }), 'unreached');
    assert.deepEqual(p.sentOnB, []);
  });
});
