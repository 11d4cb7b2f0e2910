// What the thread list says of a thread, in Node: the open thread's activity follows its events (a run's end
// stops "running", an answered ask leaves the count, a queued directive counts until it starts or is withdrawn),
// and the newer of the list's read and those events wins.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activityOf, sameActivity, shownActivity } from '../../src/console-ui/activity.ts';
import { applyEvent, EMPTY_TIMELINE, withoutPending, withQueue, type LiveEventShape } from '../../src/console-ui/timeline.ts';

const RUN = '01900000-0000-7000-8000-000000000001';
const THREAD = '01900000-0000-7000-8000-0000000000aa';
const at = (seq: number, type: string, data: Record<string, unknown>): LiveEventShape => ({ seq, type, thread_id: THREAD, at: '2026-01-01T00:00:00.000Z', data });
const ask = { id: 'p1', kind: 'approval', run_id: RUN, title: 'Write notes', options: [], tool_call: null };

describe("a listed thread's activity", () => {
  it('is running from run_started until the run ends, and counts the asks waiting', () => {
    const started = applyEvent(EMPTY_TIMELINE, at(1, 'run_started', { run_id: RUN }));
    const asking = applyEvent(started, at(2, 'approval_requested', { run_id: RUN, pending: ask }));
    assert.deepEqual(activityOf(asking), { turn_running: true, approvals: 1, questions: 0, queued: 0 });
    assert.deepEqual(activityOf(withoutPending(asking, ['p1'])), { turn_running: true, approvals: 0, questions: 0, queued: 0 });
    for (const end of ['run_finished', 'run_error', 'run_cancelled']) {
      assert.deepEqual(activityOf(applyEvent(asking, at(3, end, { run_id: RUN }))), { turn_running: false, approvals: 0, questions: 0, queued: 0 }, end);
    }
  });

  it('counts the directives queued, from the queue read and the queued and dequeued events', () => {
    const item = (id: string, position: number) => ({ id, message_id: `m-${id}`, text: id, author: 'alice', position, created_at: '2026-01-01T00:00:00.000Z' });
    const started = applyEvent(EMPTY_TIMELINE, at(1, 'run_started', { run_id: RUN }));
    const read = withQueue(started, [item('q1', 1)]);
    assert.deepEqual(activityOf(read), { turn_running: true, approvals: 0, questions: 0, queued: 1 });
    const two = applyEvent(read, at(2, 'queued', item('q2', 2)));
    assert.equal(activityOf(two).queued, 2);
    assert.equal(activityOf(applyEvent(two, at(3, 'queued', { ...item('q2', 2), text: 'edited' }))).queued, 2, 'an edit is no new item');
    assert.ok(!sameActivity(activityOf(read), activityOf(two)), 'a new count is news for the list');
    const withdrawn = applyEvent(two, at(3, 'dequeued', { id: 'q1', run_id: null, withdrawn: true }));
    assert.equal(activityOf(withdrawn).queued, 1);
    const next = '01900000-0000-7000-8000-000000000002';
    const message = { id: 'm-q2', role: 'user', text: 'q2', artifact_id: null, created_at: '2026-01-01T00:00:00.000Z' };
    assert.equal(activityOf(applyEvent(withdrawn, at(4, 'dequeued', { id: 'q2', run_id: next, conversation_id: THREAD, message }))).queued, 0);
  });

  it('shows the newer of the read and the live events: a read that says running is overruled by a later end', () => {
    const read = { turn_running: true, approvals: 0, questions: 0, queued: 0 };
    const ended = { turn_running: false, approvals: 0, questions: 0, queued: 0 };
    assert.deepEqual(shownActivity(read, { activity: ended, at: 2_000 }, 1_000), ended, 'the end came after the read');
    assert.deepEqual(shownActivity(read, { activity: ended, at: 1_000 }, 2_000), read, 'the read came after the end');
    assert.deepEqual(shownActivity(read, undefined, 1_000), read, 'a thread not opened here');
  });
});
