// Where the console draws a thread's runs, in Node: each run right after the ledger message that started it
// (the `message` event stored with the run, before its `run_started`), not after all the messages; a run with
// no message of its own at its own time; a run whose place is in an older page not loaded yet waits for it; a
// queued follow-up waits in the queue, not the ledger, and once started is drawn after the turn it waited for;
// a run with nothing to see is drawn when rewound, or for the owner (its card offers the rewind).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { threadEntries, type ThreadEntry } from '../../src/console-ui/thread-entries.ts';
import { applyEvent, EMPTY_TIMELINE, withMessages, withQueue, type LiveEventShape, type Timeline } from '../../src/console-ui/timeline.ts';

const THREAD = '01900000-0000-7000-8000-0000000000aa';
/** Time-ordered ids as UUIDv7 gives them: `n` is the moment. */
const id = (n: number) => `01900000-0000-7000-8000-${String(n).padStart(12, '0')}`;
const message = (n: number, role: string) => ({ id: id(n), role, text: `${role} ${n}`, artifact_id: null, created_at: '2026-01-01T00:00:00.000Z' });

/** Events of turns, as the socket sends them: per turn, its message (stored with its run), run_started, a tool call, the reply, the end. */
function turns(count: number): LiveEventShape[] {
  const events: LiveEventShape[] = [];
  const push = (type: string, data: Record<string, unknown>) => events.push({ seq: events.length + 1, type, thread_id: THREAD, at: '2026-01-01T00:00:00.000Z', data });
  for (let turn = 0; turn < count; turn++) {
    // The message and its run are written in one transaction: the run's id may even sort before the message's.
    const run = id(turn * 10 + 1);
    push('message', { run_id: run, message: message(turn * 10 + 2, 'user') });
    push('run_started', { run_id: run, conversation_id: THREAD });
    push('tool_call', { run_id: run, update: false, id: `t${turn}`, title: 'Look around', kind: 'read', status: 'pending' });
    push('message', { run_id: run, message: message(turn * 10 + 3, 'assistant') });
    push('run_finished', { run_id: run, stop_reason: 'end_turn', run: {} });
  }
  return events;
}

const label = (entry: ThreadEntry) => (entry.kind === 'message' ? entry.message.text : `run ${entry.run.id.slice(-2)}`);

describe('where a thread draws its runs', () => {
  it('draws each run right after the message that started it, then what came later: message 1, run 1, reply 1, message 2, run 2, reply 2', () => {
    const timeline = turns(2).reduce(applyEvent, EMPTY_TIMELINE);
    assert.deepEqual(threadEntries(timeline, true).map(label), ['user 2', 'run 01', 'assistant 3', 'user 12', 'run 11', 'assistant 13']);
  });

  it('places a run the same way whatever page of the ledger arrives first, and a run with no message of its own at its time', () => {
    const live = turns(3).reduce(applyEvent, EMPTY_TIMELINE);
    // A run whose events carried no ledger message before it started (no directive of its own).
    const lone = applyEvent(applyEvent(live, { seq: 100, type: 'run_started', thread_id: THREAD, at: '', data: { run_id: id(15) } }),
      { seq: 101, type: 'run_error', thread_id: THREAD, at: '', data: { run_id: id(15), error: 'failed: no' } });
    const expected = ['user 2', 'run 01', 'assistant 3', 'user 12', 'run 11', 'assistant 13', 'run 15', 'user 22', 'run 21', 'assistant 23'];
    fc.assert(
      fc.property(fc.shuffledSubarray([...lone.messages], { minLength: lone.messages.length }), (pageOrder) => {
        const timeline: Timeline = { ...lone, messages: pageOrder.reduce((messages, m) => withMessages(messages, [m]), withMessages([], [])) };
        assert.deepEqual(threadEntries(timeline, true).map(label), expected);
      }),
    );
  });

  it('keeps a run whose message is in an older page, not loaded yet, out until that page is', () => {
    const timeline = turns(2).reduce(applyEvent, EMPTY_TIMELINE);
    const newestPage: Timeline = { ...timeline, messages: timeline.messages.slice(2) };
    assert.deepEqual(threadEntries(newestPage, false).map(label), ['user 12', 'run 11', 'assistant 13']);
    assert.deepEqual(threadEntries(timeline, true).map(label), ['user 2', 'run 01', 'assistant 3', 'user 12', 'run 11', 'assistant 13']);
  });

  it('draws a follow-up queued during a run with the queue while it waits, then after that run: its message, its run, its reply', () => {
    const events: LiveEventShape[] = [];
    const push = (type: string, data: Record<string, unknown>) => events.push({ seq: events.length + 1, type, thread_id: THREAD, at: '2026-01-01T00:00:00.000Z', data });
    // The follow-up's ledger message is written when it is queued (4), during run 1; its run starts after run 1's reply (5).
    const item = { id: id(3), message_id: id(4), text: 'user 4', author: 'alice', position: 1, created_at: '2026-01-01T00:00:00.000Z' };
    push('message', { run_id: id(1), message: message(2, 'user') });
    push('run_started', { run_id: id(1) });
    push('tool_call', { run_id: id(1), update: false, id: 't1', title: 'Look around', kind: 'read', status: 'pending' });
    push('queued', item);
    const waiting = events.length;
    push('message', { run_id: id(1), message: message(5, 'assistant') });
    push('run_finished', { run_id: id(1) });
    push('dequeued', { id: item.id, run_id: id(7), conversation_id: THREAD, message: message(4, 'user') });
    push('run_started', { run_id: id(7) });
    push('tool_call', { run_id: id(7), update: false, id: 't2', title: 'Look around', kind: 'read', status: 'pending' });
    push('message', { run_id: id(7), message: message(8, 'assistant') });
    push('run_finished', { run_id: id(7) });

    // While it waits, the ledger page read then already holds its message: the queue shows it, the ledger does not.
    const midway = events.slice(0, waiting).reduce(applyEvent, { ...EMPTY_TIMELINE, messages: [message(2, 'user'), message(4, 'user')] });
    assert.deepEqual(threadEntries(midway, true).map(label), ['user 2', 'run 01']);
    assert.deepEqual(midway.queue.map((q) => q.text), ['user 4']);
    const expected = ['user 2', 'run 01', 'assistant 5', 'user 4', 'run 07', 'assistant 8'];
    const live = events.reduce(applyEvent, EMPTY_TIMELINE);
    assert.deepEqual(live.queue, []);
    assert.deepEqual(threadEntries(live, true).map(label), expected);
    // Opened later: the ledger page and the (now empty) queue read first, then every event replayed.
    const reopened = events.reduce(applyEvent, withQueue({ ...EMPTY_TIMELINE, messages: [2, 4, 5, 8].map((n) => message(n, n % 2 === 0 && n < 5 ? 'user' : 'assistant')) }, []));
    assert.deepEqual(threadEntries(reopened, true).map(label), expected);
  });

  it("never takes the agent's reply for the message that started the run", () => {
    const timeline = turns(1).reduce(applyEvent, EMPTY_TIMELINE);
    assert.deepEqual(timeline.startedBy, { [id(1)]: id(2) });
  });

  it('draws a run that left nothing to see once rewound, and for the owner, whose card offers "Rewind to before this"', () => {
    const plain: LiveEventShape[] = [
      { seq: 1, type: 'message', thread_id: THREAD, at: '', data: { run_id: id(1), message: message(2, 'user') } },
      { seq: 2, type: 'run_started', thread_id: THREAD, at: '', data: { run_id: id(1) } },
      { seq: 3, type: 'message', thread_id: THREAD, at: '', data: { run_id: id(1), message: message(3, 'assistant') } },
      { seq: 4, type: 'run_finished', thread_id: THREAD, at: '', data: { run_id: id(1), run: {} } },
    ];
    const timeline = plain.reduce(applyEvent, EMPTY_TIMELINE);
    assert.deepEqual(threadEntries(timeline, true).map(label), ['user 2', 'assistant 3']);
    assert.deepEqual(threadEntries(timeline, true, true).map(label), ['user 2', 'run 01', 'assistant 3']);
    const rewound = applyEvent(timeline, { seq: 5, type: 'rewound', thread_id: THREAD, at: '', data: { run_id: id(1), runs: [id(1)], restored: null } });
    assert.deepEqual(threadEntries(rewound, true).map(label), ['user 2', 'run 01', 'assistant 3']);
  });
});
