import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ok } from '../domain/result.ts';
import type { Logger } from '../ports/logger.ts';
import { ANSWER_RECHECK_EVERY_MS, backgroundJobs, WORKTREE_SWEEP_EVERY_MS } from '../src/background-jobs.ts';
import { CHAT_CLAIM_PRUNE_EVERY_MS } from '../core/channels/chat-claims.ts';
import { manualClock } from './support/manual-clock.ts';

const quiet: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/** The jobs over fakes that count what each is asked, on a clock moved by hand. */
function counted(retentionMs: number) {
  const clock = manualClock();
  const done: string[] = [];
  const jobs = backgroundJobs({
    clock, log: quiet, retentionMs,
    sweeps: { start: () => void done.push('sweeps started'), stop: async () => void done.push('sweeps stopped') },
    recheckAnswers: async () => void done.push('recheck'),
    catalog: { projects: async () => ['p'], project: async () => ({ repo: '/repo' }) as never },
    worktrees: { prune: async () => (done.push('prune worktrees'), ok(undefined)) as never, sweep: async () => (done.push('sweep worktrees'), []) },
    chatInbox: { pruneClaims: async (before) => (done.push(`prune claims before ${before.toISOString()}`), 0) },
  });
  return { clock, done, jobs };
}

describe('background jobs', () => {
  it('run at start, then each on its period, on the clock; stopped, none comes round again', async () => {
    const { clock, done, jobs } = counted(7 * 86_400_000);
    const horizon = (at: number) => `prune claims before ${new Date(at - 14 * 86_400_000).toISOString()}`;
    const start = clock.now();
    jobs.start();
    await clock.advance(0);
    assert.deepEqual(done.splice(0).sort(), ['prune worktrees', 'sweep worktrees', 'sweeps started', horizon(start)].sort());
    await clock.advance(ANSWER_RECHECK_EVERY_MS);
    assert.deepEqual(done.splice(0), ['recheck']);
    assert.equal(WORKTREE_SWEEP_EVERY_MS, CHAT_CLAIM_PRUNE_EVERY_MS, 'both hourly');
    await clock.advance(WORKTREE_SWEEP_EVERY_MS - ANSWER_RECHECK_EVERY_MS);
    assert.equal(done.filter((job) => job === 'recheck').length, WORKTREE_SWEEP_EVERY_MS / ANSWER_RECHECK_EVERY_MS - 1);
    assert.deepEqual(done.filter((job) => job !== 'recheck'), ['sweep worktrees', horizon(start + WORKTREE_SWEEP_EVERY_MS)]);
    done.length = 0;
    await jobs.stop();
    assert.deepEqual(done.splice(0), ['sweeps stopped']);
    assert.equal(clock.scheduled, 0);
    await clock.advance(WORKTREE_SWEEP_EVERY_MS);
    assert.deepEqual(done, []);
  });

  it('no retention: worktrees are pruned at start, never swept', async () => {
    const { clock, done, jobs } = counted(0);
    jobs.start();
    await clock.advance(WORKTREE_SWEEP_EVERY_MS);
    assert.ok(done.includes('prune worktrees'));
    assert.ok(!done.includes('sweep worktrees'));
    await jobs.stop();
  });
});
