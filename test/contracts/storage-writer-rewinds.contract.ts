import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { F } from '../support/fixture-world.ts';
import type { Created, WriterSuite } from './storage-writer.contract.ts';

/** The storage writer contract, continued: rewinds of a thread's runs (RewindWrites). */
export function rewindTests({ storage, newThread, directive, runs }: WriterSuite): void {
  /** A run started and ended on the thread, with the agent's reply in the ledger and the conversation's session set. */
  const finishedRun = async (t: Created, text: string) => {
    const started = await storage().writer.writeDirective(directive(t, { text }));
    assert.ok(started.kind === 'started');
    await storage().writer.setSession(t.conversation.id, `session-${text}`);
    const reply = await storage().writer.appendMessage(t.thread.id, { role: 'assistant', text: `Reply to ${text}`, artifact_id: null });
    await storage().writer.finishRun(started.run.id, 'succeeded', null);
    await storage().writer.releaseTurn(started.run.id);
    return { run: started.run, prompt: started.message, reply };
  };
  const ids = async (threadId: string, live: boolean) =>
    (await storage().ledger.page([{ thread_id: threadId, upTo: null }], { limit: 200, before: null }, { live })).items.map((m) => m.id).reverse();
  const note = (text = 'Rewound') => ({ id: uuidv7(), text });

  describe('RewindWrites: rewinds of a thread', () => {
    it('lists the runs with the message that started each; marks the run and every later one, their messages, drops the session, journals the restore', async () => {
      const t = await newThread();
      const one = await finishedRun(t, 'One');
      const two = await finishedRun(t, 'Two');
      const three = await finishedRun(t, 'Three');
      assert.deepEqual(await storage().writer.threadRuns(t.thread.id), [one, two, three].map(({ run, prompt }) => ({ id: run.id, conversation_id: t.conversation.id, message_id: prompt.id, rewound: false, ended: true })));
      const written = await storage().writer.rewind({ thread_id: t.thread.id, run_id: two.run.id, restore: 'a'.repeat(40), note: note('The thread was rewound') });
      assert.ok(written.kind === 'rewound');
      assert.deepEqual(written.runs, [two.run.id, three.run.id]);
      assert.equal(written.note.role, 'system');
      assert.equal(written.note.text, 'The thread was rewound');
      assert.deepEqual((await runs(t)).map((run) => [run.id, run.rewound]), [[three.run.id, true], [two.run.id, true], [one.run.id, false]], 'kept, read rewound');
      assert.deepEqual(await ids(t.thread.id, false), [one.prompt.id, one.reply.id, two.prompt.id, two.reply.id, three.prompt.id, three.reply.id, written.note.id], 'the ledger keeps everything');
      assert.deepEqual(await ids(t.thread.id, true), [one.prompt.id, one.reply.id, written.note.id], 'what a brief reads leaves the rewound out');
      assert.equal(await storage().writer.sessionOf(t.conversation.id), null, 'the session that saw them is dropped');
      assert.deepEqual(await storage().writer.pendingRestore(t.thread.id), { run_id: two.run.id, commit: 'a'.repeat(40) });
      await storage().writer.restored(t.thread.id, 'b'.repeat(40));
      assert.notEqual(await storage().writer.pendingRestore(t.thread.id), null, 'another commit leaves the journal');
      await storage().writer.restored(t.thread.id, 'a'.repeat(40));
      assert.equal(await storage().writer.pendingRestore(t.thread.id), null);
      // A run after the rewind, then a rewind to before it: the earlier marks stay, a newer journal replaces none left.
      const four = await finishedRun(t, 'Four');
      const again = await storage().writer.rewind({ thread_id: t.thread.id, run_id: four.run.id, restore: null, note: note() });
      assert.ok(again.kind === 'rewound');
      assert.deepEqual(again.runs, [four.run.id]);
      assert.equal(await storage().writer.pendingRestore(t.thread.id), null, 'no restore: no journal');
      assert.deepEqual(await ids(t.thread.id, true), [one.prompt.id, one.reply.id, written.note.id, again.note.id]);
    });

    it('refuses while a turn runs, while a directive waits, a run of another thread, a run rewound already: nothing written', async () => {
      const t = await newThread();
      const one = await finishedRun(t, 'One');
      const running = await storage().writer.writeDirective(directive(t, { text: 'Running' }));
      assert.ok(running.kind === 'started');
      const before = await ids(t.thread.id, false);
      assert.deepEqual(await storage().writer.rewind({ thread_id: t.thread.id, run_id: one.run.id, restore: null, note: note() }), { kind: 'turn_running' });
      const queued = await storage().writer.writeDirective(directive(t, { text: 'Queued', when_busy: { mode: 'queue', author: 'alice' } }));
      assert.equal(queued.kind, 'queued');
      await storage().writer.finishRun(running.run.id, 'succeeded', null);
      // The turn's end hands over to the queue or releases it; either way the item is still waiting or started.
      const handed = await storage().writer.handOverTurn(running.run.id, { holder: 'contract', ms: 60_000 });
      if (handed === null) await storage().writer.releaseTurn(running.run.id);
      const refused = await storage().writer.rewind({ thread_id: t.thread.id, run_id: one.run.id, restore: null, note: note() });
      assert.ok(refused.kind === 'queue_not_empty' || refused.kind === 'turn_running', refused.kind);
      const other = await newThread();
      const theirs = await finishedRun(other, 'Theirs');
      for (const runId of [theirs.run.id, uuidv7(), F.pending]) {
        // A busy thread is refused first, whatever the run.
        assert.equal((await storage().writer.rewind({ thread_id: t.thread.id, run_id: runId, restore: null, note: note() })).kind, refused.kind);
      }
      assert.equal(await storage().writer.pendingRestore(t.thread.id), null);
      assert.deepEqual((await runs(t)).filter((run) => run.rewound), [], 'nothing marked');
      assert.ok((await ids(t.thread.id, false)).length >= before.length);
      // On an idle thread: a run of another thread is not found, one rewound already says so.
      const idle = await newThread();
      const mine = await finishedRun(idle, 'Mine');
      assert.deepEqual(await storage().writer.rewind({ thread_id: idle.thread.id, run_id: theirs.run.id, restore: null, note: note() }), { kind: 'not_found' });
      assert.deepEqual(await storage().writer.rewind({ thread_id: idle.thread.id, run_id: uuidv7(), restore: null, note: note() }), { kind: 'not_found' });
      assert.equal((await storage().writer.rewind({ thread_id: idle.thread.id, run_id: mine.run.id, restore: 'c'.repeat(40), note: note() })).kind, 'rewound');
      const count = (await ids(idle.thread.id, false)).length;
      assert.deepEqual(await storage().writer.rewind({ thread_id: idle.thread.id, run_id: mine.run.id, restore: 'd'.repeat(40), note: note() }), { kind: 'rewound_already' });
      assert.equal((await ids(idle.thread.id, false)).length, count, 'no second note');
      assert.deepEqual(await storage().writer.pendingRestore(idle.thread.id), { run_id: mine.run.id, commit: 'c'.repeat(40) }, 'the first journal stays');
    });
  });
}
