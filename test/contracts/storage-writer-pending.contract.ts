import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { F } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import type { WriterSuite } from './storage-writer.contract.ts';

/** The storage writer contract, continued: pending approvals and questions, and the end of a run. */
export function pendingAndRunsTests({ storage, newThread, directive, runs, conversationOf }: WriterSuite): void {
  describe('PendingItems: answered all or none', () => {
    const setUp = async () => {
      const t = await newThread();
      const started = await storage().writer.writeDirective(directive(t));
      assert.ok(started.kind === 'started');
      const add = (kind: 'approval' | 'question', run_id: string | null) => storage().writer.addPending({
        kind, conversation_id: t.conversation.id, run_id, title: kind, options: kind === 'approval' ? [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'deny', name: 'Deny', kind: 'reject_once' }] : [],
        tool_call: kind === 'approval' ? { id: 'call-1', title: 'Write a.ts', kind: 'edit' } : null,
      });
      return { t, run: started.run, approval: await add('approval', started.run.id), question: await add('question', null) };
    };

    it('removes every answered item at once', async () => {
      const { t, approval, question } = await setUp();
      assert.deepEqual(await storage().writer.answerPending(t.thread.id, [{ id: approval.id, option: 'allow' }, { id: question.id, answer: 'main' }]), { ok: true });
      assert.deepEqual(await storage().conversations.pendingByThread(t.thread.id), []);
    });

    it('changes nothing when any answer is wrong, and names each wrong one by index', async () => {
      const { t, approval, question } = await setUp();
      const result = await storage().writer.answerPending(t.thread.id, [
        { id: approval.id, option: 'allow' },
        { id: question.id, option: 'allow' },
        { id: F.pending, option: 'allow' },
        { id: 'not-a-uuid', answer: 'x' },
        { id: approval.id, answer: 'yes please' },
      ]);
      assert.equal(result.ok, false);
      assert.deepEqual(result.ok ? [] : result.issues.map((issue) => issue.index), [1, 2, 3, 4]);
      assert.ok(!result.ok && result.issues.every((issue) => issue.message.length > 0));
      assert.equal((await storage().conversations.pendingByThread(t.thread.id)).length, 2);
    });

    it('refuses free text for an approval and an option it does not offer', async () => {
      const { t, approval } = await setUp();
      const text = await storage().writer.answerPending(t.thread.id, [{ id: approval.id, answer: 'allow' }]);
      assert.deepEqual(text.ok ? [] : text.issues.map((issue) => issue.index), [0]);
      const option = await storage().writer.answerPending(t.thread.id, [{ id: approval.id, option: 'maybe' }]);
      assert.deepEqual(option.ok ? [] : option.issues.map((issue) => issue.index), [0]);
      assert.equal((await storage().conversations.pendingByThread(t.thread.id)).length, 2);
    });

    it('of two concurrent answers to one item, one applies', async () => {
      const { t, approval } = await setUp();
      const results = await Promise.all([
        storage().writer.answerPending(t.thread.id, [{ id: approval.id, option: 'allow' }]),
        storage().writer.answerPending(t.thread.id, [{ id: approval.id, option: 'deny' }]),
      ]);
      assert.deepEqual(results.map((r) => r.ok).sort(), [false, true]);
    });
  });

  it('finishing a run ends it and drops its leftover pending items only; the turn is held until released', async () => {
    const t = await newThread();
    const started = await storage().writer.writeDirective(directive(t));
    assert.ok(started.kind === 'started');
    await storage().writer.addPending({ kind: 'approval', conversation_id: t.conversation.id, run_id: started.run.id, title: 'a', options: [{ id: 'ok', name: 'OK', kind: 'allow_once' }], tool_call: null });
    const kept = await storage().writer.addPending({ kind: 'question', conversation_id: t.conversation.id, run_id: null, title: 'q', options: [], tool_call: null });
    const ended = await storage().writer.finishRun(started.run.id, 'failed', 'agent crashed');
    assert.deepEqual(ended, { ...started.run, status: 'failed', error: 'agent crashed', ended_at: ended.ended_at });
    assert.ok(ended.ended_at !== null && Date.parse(ended.ended_at) >= Date.parse(started.run.started_at));
    assert.deepEqual(await runs(t), [ended]);
    assert.deepEqual(await storage().conversations.pendingByThread(t.thread.id), [kept]);
    // The run's last events are stored before the turn is released: until then a directive is busy.
    assert.equal((await conversationOf(t)).turn_running, true);
    assert.equal((await storage().writer.writeDirective(directive(t))).kind, 'busy');
    assert.deepEqual(await storage().writer.finishRun(started.run.id, 'succeeded', null), ended, 'an ended run stays as it ended');
    await storage().writer.releaseTurn(started.run.id);
    assert.equal((await conversationOf(t)).turn_running, false);
    await assert.rejects(storage().writer.finishRun(testId(99_999), 'succeeded', null), 'an unknown run');
  });
}
