// Issue 39: a thread's worktree is checkpointed before its first turn and at the end of every turn, however it
// ends (succeeded, failed, cancelled, swept), before the run reads as ended; a checkpoint never fails a turn.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { emptyState } from '../../adapters/memory/state.ts';
import { fail } from '../../domain/result.ts';
import type { AgentRunner } from '../../ports/agent-runner.ts';
import { emitter } from '../../core/runs/emit.ts';
import { PendingWaiters } from '../../core/runs/pending-waiters.ts';
import { sweeper } from '../../core/runs/sweeper.ts';
import type { TurnCheckpoint } from '../../core/runs/turn-types.ts';
import { backgroundTurns } from '../../core/runs/turns.ts';
import { turnCheckpoints } from '../../core/worktrees/checkpoints.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { manualClock } from '../support/manual-clock.ts';

const DIRECTORY = '/data/worktrees/thread';

/** Memory storage with the fixture world, and a console thread whose directive claimed its turn under `lease`. */
async function claimedTurn(lease: { holder: string; ms: number }) {
  const state = emptyState();
  const storage = createMemoryStorage(state);
  await storage.importWorld(fixtureWorld());
  const emit = emitter(storage.events, createMemoryEventBus());
  const t = await storage.writer.createConsoleThread({
    owner: 'alice', key: randomUUID(), project: null, title: 't', conversation: { agent: 'claude', model: 'opus', permission_mode: null, effort: null },
  });
  const started = await storage.writer.writeDirective({
    thread_id: t.thread.id, conversation_id: t.conversation.id, message_id: null, author: 'alice', text: 'x', directory: DIRECTORY, permission_mode: null, lease,
  });
  assert.ok(started.kind === 'started');
  return { storage, state, emit, t, started };
}

/** A checkpoint hook that keeps what it was asked, with the run's status at that moment. */
function keptCheckpoints(status: (runId: string) => Promise<string | undefined>) {
  const asked: { runId: string | null; messageId: string | null; directory: string | null; status: string | undefined }[] = [];
  const checkpoint: TurnCheckpoint = async ({ runId, messageId, directory }) => {
    asked.push({ runId, messageId, directory, status: runId === null ? undefined : await status(runId) });
  };
  return { asked, checkpoint };
}

const runner = (end: 'end_turn' | 'throw' | 'cancelled'): AgentRunner => ({
  async runTurn() {
    if (end === 'throw') throw new Error('the agent crashed');
    return { sessionId: 'session-1', stopReason: end };
  },
  setMode: async () => null,
  steer: async () => 'unsupported' as const,
  close: async () => {},
});

describe('checkpoints in the turn lifecycle', () => {
  for (const end of ['end_turn', 'throw', 'cancelled'] as const) {
    it(`a turn that ends ${end === 'throw' ? 'failed' : end}: one before it, one at its end, before the run reads as ended`, async () => {
      const log = pino({ level: 'silent' });
      const { storage, emit, t, started } = await claimedTurn({ holder: 'A', ms: 60_000 });
      const status = async (runId: string) => (await storage.conversations.runsPage(t.thread.id, t.conversation.id, { limit: 10, before: null }))!.items.find((r) => r.id === runId)?.status;
      const { asked, checkpoint } = keptCheckpoints(status);
      const turns = backgroundTurns({ writer: storage.writer, runner: runner(end), emit, waiters: new PendingWaiters(), log, holder: 'A', leaseMs: 60_000, idleMs: 60_000, clock: manualClock(), checkpoint });
      turns.start({ threadId: t.thread.id, conversation: t.conversation, run: started.run, agent: { id: 'claude' } as never, prompt: 'x', cwd: DIRECTORY, mode: null, messageId: 'message-1' });
      await turns.drain();
      assert.deepEqual(asked, [
        { runId: null, messageId: null, directory: DIRECTORY, status: undefined },
        { runId: started.run.id, messageId: 'message-1', directory: DIRECTORY, status: 'running' },
      ]);
      assert.equal(await status(started.run.id), { end_turn: 'succeeded', throw: 'failed', cancelled: 'cancelled' }[end]);
    });
  }

  it('a swept turn is checkpointed in its directory before it ends', async () => {
    const log = pino({ level: 'silent' });
    const { storage, state, emit, t, started } = await claimedTurn({ holder: 'A', ms: 60_000 });
    for (const turn of state.turns.values()) turn.expires = 0;
    const status = async (runId: string) => (await storage.conversations.runsPage(t.thread.id, t.conversation.id, { limit: 10, before: null }))!.items.find((r) => r.id === runId)?.status;
    const { asked, checkpoint } = keptCheckpoints(status);
    const sweeps = sweeper({ writer: storage.writer, emit, checkpoint, log, holder: 'B', leaseMs: 60_000, clock: manualClock(), runsHere: () => false });
    assert.equal(await sweeps.sweep(), 1);
    assert.deepEqual(asked, [{ runId: started.run.id, messageId: null, directory: DIRECTORY, status: 'running' }]);
    assert.equal(await status(started.run.id), 'failed');
  });

  it('a checkpoint that fails or throws is logged, never thrown', async () => {
    const lines: { level: number; msg: string; code?: string }[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const failing = turnCheckpoints({ worktrees: { checkpoint: async () => fail({ code: 'worktree_unreadable' }) }, log });
    const throwing = turnCheckpoints({ worktrees: { checkpoint: async () => { throw new Error('git died'); } }, log });
    await failing({ threadId: 't', runId: 'r', messageId: null, directory: DIRECTORY });
    await throwing({ threadId: 't', runId: 'r', messageId: null, directory: DIRECTORY });
    await throwing({ threadId: 't', runId: 'r', messageId: null, directory: null });
    assert.deepEqual(lines.filter((line) => line.level === 40).map((line) => [line.msg, line.code]), [
      ['the checkpoint of a turn could not be recorded', 'worktree_unreadable'],
      ['the checkpoint of a turn could not be recorded', undefined],
    ]);
  });

  // Issue 40: a checkpoint another instance's turn beat to the remote, set aside on this instance, was a warning
  // among others; it is an error, with the ref it is kept on.
  it("a checkpoint set aside (another instance's was pushed first and it could not be put on top) is logged as an error", async () => {
    const lines: { level: number; msg: string; code?: string; detail?: string }[] = [];
    const log = pino({ level: 'debug' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const detail = 'kept on this instance as refs/console/rejected/t/r';
    const setAside = turnCheckpoints({ worktrees: { checkpoint: async () => fail({ code: 'checkpoint_set_aside', detail }) }, log });
    await setAside({ threadId: 't', runId: 'r', messageId: null, directory: DIRECTORY });
    assert.deepEqual(lines.map((line) => [line.level, line.code, line.detail]), [[50, 'checkpoint_set_aside', detail]]);
  });
});
