// The rewind use case over the memory storage and a worktrees fake: who may rewind, and what it asks of the ports.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { rewindRestores, threadRewinds } from '../../core/rewinds/rewinds.ts';
import { ok } from '../../domain/result.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';

describe('rewind (core)', () => {
  const setUp = async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const restores: string[] = [];
    const worktrees: Pick<Worktrees, 'checkpoints' | 'restore'> = {
      checkpoints: async () => ok([]),
      restore: async (_worktree, input) => {
        restores.push(input.commit);
        return ok(null);
      },
    };
    const events: string[] = [];
    let id = 0;
    const rewind = threadRewinds({
      storage, worktrees, runDirectory: async () => ok('/nowhere'),
      newId: () => `0190a000-0000-7000-8000-${String(++id).padStart(12, '0')}`,
      emit: async (threadId, type, data) => {
        events.push(type);
        return { seq: events.length, type, thread_id: threadId, at: new Date(0).toISOString(), data };
      },
    });
    return { storage, rewind, restores, events };
  };

  it("refuses a member who is not the thread's owner (403), and anyone who cannot read it (404), writing nothing", async () => {
    const { rewind, events } = await setUp();
    const member = await rewind({ id: 'alice', name: 'Alice' } as never, F.shared, { run_id: F.pending });
    assert.deepEqual(member, { ok: false, error: { code: 'not_thread_owner' } });
    const stranger = await rewind({ id: 'carol', name: 'Carol' } as never, F.root, { run_id: F.pending });
    assert.deepEqual(stranger, { ok: false, error: { code: 'thread_unavailable' } });
    assert.deepEqual(events, []);
  });

  it('a run that is not one of the thread’s is a 422 on body.run_id', async () => {
    const { rewind } = await setUp();
    const answer = await rewind({ id: 'bob', name: 'Bob' } as never, F.shared, { run_id: F.pending });
    assert.equal(!answer.ok && answer.error.code, 'validation_failed');
    assert.equal(!answer.ok && answer.error.errors?.[0]?.path, 'body.run_id');
  });

  it('settles a journaled restore once, then forgets it', async () => {
    const { storage, restores } = await setUp();
    const worktrees: Pick<Worktrees, 'restore'> = { restore: async (_w, input) => (restores.push(input.commit), ok(null)) };
    const settle = rewindRestores({ writer: storage.writer, worktrees });
    const thread = { id: F.root, worktree: { branch: `console/${F.root}`, base: 'main', path: '/w' } };
    assert.deepEqual(await settle(thread), ok(null));
    assert.deepEqual(restores, [], 'nothing journaled: nothing restored');
  });
});
