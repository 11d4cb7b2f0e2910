// The console UI's timeline rules, in Node: events build the same view whatever is replayed, tool calls
// merge by id, a run's end closes its pending items, ledger messages appear once, in id order, and the queue
// follows its read and its events (an interrupt first, an edit in place, a start or a withdrawal removes); a
// run reads rewound when its end's `run` says so or a `rewound` event names it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { applyEvent, EMPTY_TIMELINE, runningRun, withMessages, withQueue, withRewound, type LiveEventShape, type Timeline } from '../../src/console-ui/timeline.ts';

const RUN = '01900000-0000-7000-8000-000000000001';
const THREAD = '01900000-0000-7000-8000-0000000000aa';
let seq = 0;
const event = (type: string, data: Record<string, unknown>): LiveEventShape => ({ seq: ++seq, type, thread_id: THREAD, at: '2026-01-01T00:00:00.000Z', data });
const message = (n: number, role = 'user') => ({ id: `01900000-0000-7000-8000-00000000${String(n).padStart(4, '0')}`, role, text: `m${n}`, artifact_id: null, created_at: '2026-01-01T00:00:00.000Z' });

/** A run's whole life, as the socket sends it. */
function aRun(): LiveEventShape[] {
  seq = 0;
  return [
    event('message', { run_id: RUN, message: message(1) }),
    event('run_started', { run_id: RUN, conversation_id: THREAD }),
    event('message', { run_id: RUN, delta: 'Hel' }),
    event('tool_call', { run_id: RUN, update: false, id: 't1', title: 'Write notes', kind: 'edit', status: 'pending', content: [{ type: 'diff', path: 'a', newText: 'x' }] }),
    event('approval_requested', { run_id: RUN, pending: { id: 'p1', kind: 'approval', run_id: RUN, title: 'Write notes', options: [], tool_call: null } }),
    event('message', { run_id: RUN, delta: 'lo' }),
    event('tool_call', { run_id: RUN, update: true, id: 't1', status: 'completed' }),
    event('plan', { run_id: RUN, entries: [{ content: 'Answer', priority: 'high', status: 'completed' }] }),
    event('message', { run_id: RUN, message: message(2, 'assistant') }),
    event('run_finished', { run_id: RUN, stop_reason: 'end_turn', run: {} }),
    event('reflex_asleep', { run_id: RUN }),
  ];
}
const replay = (events: readonly LiveEventShape[], from: Timeline = EMPTY_TIMELINE) => events.reduce(applyEvent, from);

describe('the console timeline', () => {
  it('builds a run from its events: streamed text, tool calls merged by id, plan, end; the end closes its asks', () => {
    const events = aRun();
    const midway = replay(events.slice(0, 6));
    assert.equal(runningRun(midway)?.text, 'Hello');
    assert.equal(midway.pending.length, 1);
    const done = replay(events);
    const [run] = done.runs;
    assert.equal(run?.status, 'succeeded');
    assert.deepEqual(run?.toolCalls, [{ id: 't1', title: 'Write notes', kind: 'edit', status: 'completed', content: [{ type: 'diff', path: 'a', newText: 'x' }] }]);
    assert.equal(run?.plan.length, 1);
    assert.deepEqual(done.pending, [], "the run's end closes its pending items");
    assert.deepEqual(done.messages.map((m) => m.text), ['m1', 'm2']);
    assert.equal(done.lastSeq, events.length);
    assert.equal(runningRun(done), null);
  });

  it('a steered message joins the ledger and starts no run: the running run goes on, started by its own message', () => {
    const events = aRun();
    const steered = { ...events[5]!, type: 'steered', data: { run_id: RUN, message: message(3) } };
    const midway = replay([...events.slice(0, 5), steered]);
    assert.deepEqual(midway.messages.map((m) => m.text), ['m1', 'm3']);
    assert.deepEqual(midway.startedBy, { [RUN]: message(1).id });
    assert.equal(midway.runs.length, 1);
    assert.equal(runningRun(midway)?.id, RUN);
  });

  it('gives the same view whatever is delivered again (a reconnect replays from after)', () => {
    const events = aRun();
    const once = replay(events);
    fc.assert(
      fc.property(fc.array(fc.nat({ max: events.length - 1 }), { maxLength: 30 }), (repeats) => {
        // Each delivery: the next new event, or one already applied again.
        const delivered: LiveEventShape[] = [];
        let next = 0;
        for (const pick of repeats) {
          if (next < events.length) delivered.push(events[next++]!);
          delivered.push(events[Math.min(pick, Math.max(0, next - 1))]!);
        }
        delivered.push(...events.slice(next));
        assert.deepEqual(replay(delivered), once);
      }),
    );
  });

  it('keeps the queue in run order from its events: an interrupt goes first, an edit stays in place, a start or a withdrawal leaves', () => {
    seq = 0;
    const item = (n: number, position: number, text = `q${n}`) => ({ id: `q${n}`, message_id: message(n).id, text, author: 'alice', position, created_at: '2026-01-01T00:00:00.000Z' });
    const events = [
      event('run_started', { run_id: RUN }),
      event('queued', item(3, 1)),
      event('queued', item(4, 2)),
      event('queued', item(5, 1)), // an interrupt
      event('queued', item(3, 2, 'q3, edited')),
      event('dequeued', { id: 'q4', run_id: null, withdrawn: true }),
    ];
    const texts = (timeline: Timeline) => timeline.queue.map((q) => q.text);
    assert.deepEqual(texts(replay(events.slice(0, 3))), ['q3', 'q4']);
    assert.deepEqual(texts(replay(events.slice(0, 4))), ['q5', 'q3', 'q4']);
    assert.deepEqual(texts(replay(events)), ['q5', 'q3, edited']);
    assert.deepEqual(texts(replay(events, replay(events))), ['q5', 'q3, edited'], 'events delivered again change nothing');
    // The queue read when the thread opened, then every event replayed: the same queue.
    assert.deepEqual(texts(replay(events, withQueue(EMPTY_TIMELINE, [item(5, 1), item(3, 2, 'q3, edited')]))), ['q5', 'q3, edited']);
    const started = applyEvent(replay(events), event('dequeued', { id: 'q5', run_id: RUN.replace(/1$/, '2'), conversation_id: THREAD, message: message(5) }));
    assert.deepEqual(texts(started), ['q3, edited']);
    assert.deepEqual(started.messages.map((m) => m.text), ['m5'], 'a started item brings its ledger message');
    assert.equal(started.startedBy[RUN.replace(/1$/, '2')], message(5).id);
  });

  it('keeps each ledger message once, in id order, whatever pages and events bring it', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 40 }), { maxLength: 60 }), (pageA, pageB) => {
        const merged = withMessages(withMessages([], pageA.map((n) => message(n))), pageB.map((n) => message(n)));
        const expected = [...new Set([...pageA, ...pageB])].sort((a, b) => a - b).map((n) => `m${n}`);
        assert.deepEqual(merged.map((m) => m.text), expected);
      }),
    );
  });

  it('marks the runs a `rewound` event names, and a run whose end already reads rewound; a run not on the page is not made up', () => {
    const first = aRun();
    const later = '01900000-0000-7000-8000-000000000009';
    const unseen = '01900000-0000-7000-8000-00000000000f';
    const events = [
      ...first,
      event('run_started', { run_id: later }),
      event('run_finished', { run_id: later, run: { id: later, rewound: false } }),
      event('message', { run_id: null, message: message(20, 'system') }),
      event('rewound', { run_id: later, runs: [later, unseen], restored: null }),
    ];
    const timeline = replay(events);
    assert.deepEqual(timeline.runs.map((run) => [run.id, run.rewound]), [[RUN, false], [later, true]]);
    assert.deepEqual(replay(events, timeline), timeline, 'a replay changes nothing');
    assert.deepEqual(replay(events.slice(0, first.length)).runs.map((run) => run.rewound), [false]);
    // A run read after a rewind (its end's `run` says so).
    const read = replay([event('run_started', { run_id: RUN }), event('run_cancelled', { run_id: RUN, reason: 'cancelled', run: { rewound: true } })]);
    assert.equal(read.runs[0]?.rewound, true);
    assert.equal(read.runs[0]?.error, 'cancelled');
    // What the rewind's own answer marks, before its event comes.
    assert.deepEqual(withRewound(replay(first), [RUN]).runs.map((run) => run.rewound), [true]);
  });
});
