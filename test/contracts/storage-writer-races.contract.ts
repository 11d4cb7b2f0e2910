import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Run } from '../../domain/model.ts';
import type { DirectiveOutcome } from '../../ports/directive-writes.ts';
import type { MoveOutcome } from '../../ports/move-writes.ts';
import type { Created, WriterSuite } from './storage-writer.contract.ts';
import { summonOf, teleportOf } from './storage-writer-turns.contract.ts';

/** Rounds of each race: enough for an interleaving to show where the checks are not one decision. */
const ROUNDS = 20;

type Outcome = DirectiveOutcome | MoveOutcome;

/** Whether a write started a turn (a directive's run, a summon's first turn). */
const startedTurn = (outcome: Outcome): boolean => outcome.kind === 'started' || (outcome.kind === 'moved' && outcome.run !== null);

/**
 * The storage writer contract, continued: writes that start a turn or replace or move the
 * conversation (directives, summon, teleport) race on one thread, and each still sees the others
 * whole. The busy check and "the latest conversation" are one decision: issue 24, where a summon and
 * a directive sent together both started a turn (and PostgreSQL answered some mixes with a deadlock).
 */
export function oneTurnPerThreadTests({ storage, newThread, directive }: WriterSuite): void {
  /** Every run of the thread, on any of its conversations. */
  const runsOf = async (threadId: string): Promise<Run[]> => {
    const all: Run[] = [];
    for (const c of await storage().conversations.listByThread(threadId)) {
      all.push(...(await storage().conversations.runsPage(threadId, c.id, { limit: 200, before: null }))!.items);
    }
    return all;
  };
  /** Fires the writes together and answers their outcomes; a write that fails (a deadlock, say) fails the case. */
  const together = async (writes: readonly (() => Promise<Outcome>)[]): Promise<Outcome[]> => {
    const settled = await Promise.allSettled(writes.map((write) => write()));
    const failed = settled.filter((s) => s.status === 'rejected').map((s) => String((s as PromiseRejectedResult).reason));
    assert.deepEqual(failed, [], 'no write fails');
    return settled.map((s) => (s as PromiseFulfilledResult<Outcome>).value);
  };
  const write = {
    // Without a message_id the directive's first statement claims the conversation: the shape that
    // deadlocked against a summon holding the thread row on PostgreSQL.
    directive: (t: Created) => () => storage().writer.writeDirective(directive(t, { message_id: null })),
    summon: (t: Created) => () => storage().writer.writeMove(summonOf(t)),
    teleport: (t: Created) => () => storage().writer.writeMove(teleportOf(t).write),
  };

  describe('DirectiveWrites and MoveWrites: one turn per thread, whatever races', () => {
    it('a directive on the conversation a summon replaced writes nothing: busy while the new turn runs, changed after', async () => {
      const t = await newThread();
      const summoned = await storage().writer.writeMove(summonOf(t));
      assert.ok(summoned.kind === 'moved' && summoned.run !== null);
      const events = await storage().events.since(t.thread.id, 0, 100);
      // The directive was asked of the conversation it read as the latest, before the summon was written.
      assert.deepEqual(await storage().writer.writeDirective(directive(t)), { kind: 'busy' });
      await storage().writer.finishRun(summoned.run.id, 'succeeded', null);
      await storage().writer.releaseTurn(summoned.run.id);
      assert.deepEqual(await storage().writer.writeDirective(directive(t)), { kind: 'changed' });
      assert.deepEqual((await runsOf(t.thread.id)).map((r) => r.id), [summoned.run.id], 'no run on the replaced conversation');
      assert.deepEqual(await storage().events.since(t.thread.id, 0, 100), events, 'no event either');
      // The conversation that speaks now takes it.
      const next = await storage().writer.writeDirective({ ...directive(t), conversation_id: summoned.conversation.id });
      assert.equal(next.kind, 'started');
    });

    it(`a summon and a directive sent together on an idle thread (${ROUNDS} rounds): one turn starts, the other is refused`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const t = await newThread();
        // Both orders of sending: either write may come first.
        const writes = round % 2 === 0 ? [write.summon(t), write.directive(t)] : [write.directive(t), write.summon(t)];
        const outcomes = await together(writes);
        const kinds = outcomes.map((o) => o.kind);
        assert.equal(outcomes.filter(startedTurn).length, 1, `round ${round}: one turn, got ${kinds.join(', ')}`);
        assert.ok(outcomes.every((o) => startedTurn(o) || o.kind === 'busy' || o.kind === 'changed'), `round ${round}: ${kinds.join(', ')}`);
        assert.deepEqual((await runsOf(t.thread.id)).map((r) => r.status), ['running'], `round ${round}: one run on the thread`);
      }
    });

    it(`a teleport and a directive sent together on an idle thread (${ROUNDS} rounds): one of them is written, the other refused`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const t = await newThread();
        const writes = round % 2 === 0 ? [write.teleport(t), write.directive(t)] : [write.directive(t), write.teleport(t)];
        const outcomes = await together(writes);
        const kinds = outcomes.map((o) => o.kind).sort();
        // The directive first: the teleport finds a turn running. The teleport first: the directive finds the conversation gone.
        assert.ok(kinds.join() === 'busy,started' || kinds.join() === 'moved,moved_away', `round ${round}: ${kinds.join(', ')}`);
        assert.ok((await runsOf(t.thread.id)).length <= 1, `round ${round}: at most one run`);
      }
    });

    it('ten at once on an idle thread, summons and directives mixed (10 rounds): one turn, nine refusals, no failure', async () => {
      for (let round = 0; round < 10; round++) {
        const t = await newThread();
        const outcomes = await together(Array.from({ length: 10 }, (_, i) => (i % 2 === round % 2 ? write.summon(t) : write.directive(t))));
        assert.equal(outcomes.filter(startedTurn).length, 1, `round ${round}: ${outcomes.map((o) => o.kind).join(', ')}`);
        assert.equal((await runsOf(t.thread.id)).length, 1, `round ${round}: one run`);
        assert.equal((await storage().conversations.listByThread(t.thread.id)).length, outcomes.some((o) => o.kind === 'moved') ? 2 : 1);
      }
    });
  });
}
