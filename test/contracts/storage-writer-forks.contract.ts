import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { NewFork } from '../../ports/fork-writes.ts';
import type { Storage } from '../../ports/storage.ts';
import { F } from '../support/fixture-world.ts';
import type { WriterSuite } from './storage-writer.contract.ts';

/** A fork of `source` at `cutoff` for `owner`, its visible ledger read as alice (who owns the fixture's forks). */
async function forkOf(storage: Storage, source: string, cutoff: string, owner = 'bob'): Promise<NewFork> {
  const found = await storage.threads.findAccessible('alice', source);
  assert.ok(found !== null);
  return {
    id: uuidv7(), owner, source_thread_id: source, cutoff, visible: ledgerSegments(found.chain), project: found.row.project, title: 'A fork',
    conversation: { id: uuidv7(), agent: 'claude', model: 'sonnet', permission_mode: 'plan', effort: 'high' },
  };
}

/** What `user` reads of a thread's ledger, oldest first: the message ids. */
async function ledgerIds(storage: Storage, user: string, threadId: string): Promise<string[]> {
  const found = await storage.threads.findAccessible(user, threadId);
  assert.ok(found !== null, `${user} reads ${threadId}`);
  return (await storage.ledger.page(ledgerSegments(found.chain), { limit: 200, before: null })).items.map((m) => m.id).reverse();
}

/** The storage writer contract, continued: forks from a message (ForkWrites). */
export function forkTests({ storage, newThread, directive }: WriterSuite): void {
  describe('ForkWrites: forks from a message', () => {
    it("writes a console thread of the caller's, fork_of the source at the message, with a conversation and no session", async () => {
      const fork = await forkOf(storage(), F.root, F.rootMsgs[1]!);
      const written = await storage().writer.createFork(fork);
      assert.ok(written.kind === 'forked');
      assert.deepEqual(written.thread, {
        id: fork.id, key: null, channel: 'console', owner: 'bob', project: 'acme-web', title: 'A fork',
        fork_of: F.root, fork_cutoff: F.rootMsgs[1], created_at: uuid7Time(fork.id), worktree: null, archived: false,
      });
      assert.deepEqual(written.conversation, {
        id: fork.conversation.id, thread_id: fork.id, agent: 'claude', model: 'sonnet', permission_mode: 'plan', effort: 'high',
        address: { channel: 'console', id: fork.id }, turn_running: false, created_at: uuid7Time(fork.conversation.id), moved_to: null,
      });
      assert.deepEqual(await storage().conversations.listByThread(fork.id), [written.conversation]);
      assert.equal(await storage().writer.sessionOf(fork.conversation.id), null, 'no agent session is shared');
      assert.deepEqual(await ledgerIds(storage(), 'bob', fork.id), F.rootMsgs.slice(0, 2), "the source's ledger up to the cutoff");
      const listed = await storage().threads.listAccessible('bob', { limit: 200, before: null });
      assert.ok(listed.items.some((t) => t.id === fork.id), "in the caller's thread list");
      assert.equal(await storage().threads.findRow('alice', fork.id), null, "the fork is the caller's alone");
    });

    it('a fork of a fork at an inherited message honours both cutoffs', async () => {
      // The fixture's fork sees the root up to its third message; forked again at the root's second.
      const fork = await forkOf(storage(), F.fork, F.rootMsgs[1]!);
      assert.equal((await storage().writer.createFork(fork)).kind, 'forked');
      assert.deepEqual(await ledgerIds(storage(), 'bob', fork.id), F.rootMsgs.slice(0, 2));
      // At its own first message: the root up to the fork's cutoff, then that message.
      const own = await forkOf(storage(), F.fork, F.forkMsgs[0]!);
      assert.equal((await storage().writer.createFork(own)).kind, 'forked');
      assert.deepEqual(await ledgerIds(storage(), 'bob', own.id), [...F.rootMsgs.slice(0, 3), F.forkMsgs[0]]);
      // A fork of the fork of a fork: three cutoffs on the chain.
      const deep = await forkOf(storage(), F.forkOfFork, F.forkOfForkMsgs[0]!);
      assert.equal((await storage().writer.createFork(deep)).kind, 'forked');
      assert.deepEqual(await ledgerIds(storage(), 'bob', deep.id), [...F.rootMsgs.slice(0, 3), F.forkMsgs[0], F.forkOfForkMsgs[0]]);
    });

    it('refuses a cutoff whose run has not ended (turn_running) or that waits in the queue (queue_not_empty), writing nothing; once its run ended it forks', async () => {
      const t = await newThread();
      const running = await storage().writer.writeDirective(directive(t, { text: 'Running' }));
      assert.ok(running.kind === 'started');
      const reply = await storage().writer.appendMessage(t.thread.id, { role: 'assistant', text: 'Half a reply', artifact_id: null });
      const queued = await storage().writer.writeDirective(directive(t, { text: 'Queued', when_busy: { mode: 'queue', author: 'alice' } }));
      assert.ok(queued.kind === 'queued');
      const refusals: [string, string][] = [[running.message.id, 'turn_running'], [reply.id, 'turn_running'], [queued.item.message_id, 'queue_not_empty']];
      for (const [cutoff, kind] of refusals) {
        const fork = await forkOf(storage(), t.thread.id, cutoff);
        assert.deepEqual(await storage().writer.createFork(fork), { kind }, cutoff);
        assert.equal(await storage().threads.exists(fork.id), false);
      }
      await storage().writer.finishRun(running.run.id, 'succeeded', null);
      // The run ended: its prompt and reply fork; the queued directive still waits (no hand-over here).
      for (const cutoff of [running.message.id, reply.id]) assert.equal((await storage().writer.createFork(await forkOf(storage(), t.thread.id, cutoff))).kind, 'forked');
      assert.deepEqual(await storage().writer.createFork(await forkOf(storage(), t.thread.id, queued.item.message_id)), { kind: 'queue_not_empty' });
    });

    it("refuses a cutoff that is not in the source's visible ledger, and writes nothing", async () => {
      for (const cutoff of [F.rootMsgs[4]!, F.forkMsgs[1]!, F.bobMsg, uuidv7()]) {
        // The fork of a fork sees neither the root past the fork's cutoff, nor the fork past its own, nor another thread.
        const fork = await forkOf(storage(), F.forkOfFork, cutoff);
        assert.deepEqual(await storage().writer.createFork(fork), { kind: 'not_in_ledger' }, cutoff);
        assert.equal(await storage().threads.exists(fork.id), false);
        assert.deepEqual(await storage().conversations.listByThread(fork.id), []);
      }
    });
  });
}
