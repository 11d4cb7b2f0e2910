// Starting a queued directive's turn (core/runs/queue-start.ts), over fakes: the directory is worked out on the
// starting instance; a checkpoint of this instance's set aside on the way is logged and the directory asked again (the
// thread goes on from the other instance's), where before the queued run failed; any other refusal lets the run lapse.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { queuedTurns } from '../../core/runs/queue-start.ts';
import type { TurnOrder } from '../../core/runs/turn-types.ts';
import type { Failure } from '../../domain/errors.ts';
import type { Agent, Conversation, Run, Thread } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { DequeuedTurn } from '../../ports/turn-handover.ts';

const THREAD = { id: 't1', owner: 'alice', fork_of: null } as Thread;
const TURN = {
  thread: THREAD,
  conversation: { id: 'c1', thread_id: 't1', agent: 'claude', permission_mode: null } as unknown as Conversation,
  run: { id: 'r1', conversation_id: 'c1' } as Run,
  item: { text: 'Queued work', message_id: 'm1' },
  event: { id: '1', type: 'dequeued', data: {} },
} as unknown as DequeuedTurn;

function starter(answers: Result<string, Failure>[]) {
  const started: TurnOrder[] = [];
  const logged: { level: string; message: string }[] = [];
  const at = (level: string) => (_fields: unknown, message: string) => void logged.push({ level, message });
  let asked = 0;
  const startQueued = queuedTurns({
    storage: { catalog: { agents: async () => [{ id: 'claude' } as Agent] }, threads: {}, ledger: {}, conversations: {}, writer: {} } as never,
    bus: createMemoryEventBus(),
    turns: () => ({ start: (order: TurnOrder) => void started.push(order) }) as never,
    runDirectory: async () => answers[Math.min(asked++, answers.length - 1)]!,
    log: { info: at('info'), warn: at('warn'), error: at('error') } as never,
  });
  return { startQueued, started, logged, asked: () => asked };
}

describe('starting a queued turn', () => {
  it('a checkpoint set aside on the way is logged, and the turn starts in the directory asked again', async () => {
    const { startQueued, started, logged, asked } = starter([fail({ code: 'checkpoint_set_aside', detail: 'kept aside' }), ok('/data/worktrees/t1')]);
    assert.equal(await startQueued(TURN), true);
    assert.equal(asked(), 2);
    assert.deepEqual(started.map((order) => [order.cwd, order.prompt, order.unsent]), [['/data/worktrees/t1', 'Queued work', true]]);
    assert.ok(logged.some((line) => line.level === 'error' && /set aside/.test(line.message)), JSON.stringify(logged));
  });

  it('any other refusal (the repository unreachable) starts nothing: the run lapses for the sweep', async () => {
    const { startQueued, started, asked } = starter([fail({ code: 'repository_unavailable', detail: 'down' }), ok('/never')]);
    assert.equal(await startQueued(TURN), false);
    assert.equal(asked(), 1);
    assert.deepEqual(started, []);
  });
});
