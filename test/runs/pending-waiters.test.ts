import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { PendingWaiters } from '../../core/runs/pending-waiters.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

/** An answer whose bus signal was lost (a reconnect) still resumes the agent: it is stored. */
describe('pending waiters', () => {
  const setUp = async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const t = await storage.writer.createConsoleThread({
      owner: 'alice', key: randomUUID(), project: null, title: 't', conversation: { agent: 'claude', model: 'opus', permission_mode: null, effort: null },
    });
    const started = await storage.writer.writeDirective({
      thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: null, author: 'alice', text: 'x', directory: null, permission_mode: null, lease: { holder: 'h', ms: 60_000 },
    });
    assert.ok(started.kind === 'started');
    const ask = await storage.writer.addPending({ kind: 'approval', conversation_id: t.conversation.id, run_id: started.run.id, title: 'Write?', options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }], tool_call: null });
    return { storage, thread: t.thread, run: started.run, ask };
  };

  it('a reconnect finds an answer whose signal was lost', async () => {
    const { storage, thread, run, ask } = await setUp();
    const waiters = new PendingWaiters((ids) => storage.writer.pendingAnswers(ids));
    let decided: unknown = null;
    const decision = waiters.wait(ask.id, run.id).then((answer) => (decided = answer));
    // Answered through storage, but the signal never arrives.
    assert.deepEqual(await storage.writer.answerPending(thread.id, [{ id: ask.id, option: 'allow' }]), { ok: true });
    await new Promise((resolve) => setTimeout(resolve, 20)); // a window in which nothing must resume it
    assert.equal(decided, null, 'nothing resumes it without the signal');
    waiters.onSignal({ kind: 'reconnected' });
    assert.deepEqual(await decision, { outcome: 'selected', optionId: 'allow' });
  });

  it('a recheck with nothing answered leaves the waiter waiting; the signal still settles it once', async () => {
    const { storage, run, ask } = await setUp();
    const waiters = new PendingWaiters((ids) => storage.writer.pendingAnswers(ids));
    const decisions: unknown[] = [];
    const settled = waiters.wait(ask.id, run.id).then((decision) => decisions.push(decision));
    await waiters.recheck();
    waiters.onSignal({ kind: 'pending_answered', answers: [{ id: ask.id, option: 'allow' }] });
    waiters.onSignal({ kind: 'pending_answered', answers: [{ id: ask.id, option: 'deny' }] });
    await settled;
    assert.deepEqual(decisions, [{ outcome: 'selected', optionId: 'allow' }]);
  });
});
