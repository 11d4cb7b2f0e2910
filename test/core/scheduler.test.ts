// The scheduler's looks (core/automation/scheduler.ts): one at a time per instance, and a look asked for while
// one is under way is run once more right after it, so a time that fell due during a slow look is not left to
// the next tick.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { scheduler, SCHEDULE_TICK_MS } from '../../core/automation/scheduler.ts';
import type { Logger } from '../../ports/logger.ts';
import type { ScheduleStore } from '../../ports/schedule-store.ts';
import { manualClock } from '../support/manual-clock.ts';

/** A store with nothing due whose `due` looks wait until the test lets each one go. */
function slowStore() {
  const looks: (() => void)[] = [];
  const store = {
    due: () => new Promise<[]>((resolve) => looks.push(() => resolve([]))),
    unfinished: async () => [],
  } as unknown as ScheduleStore;
  return { store, looks };
}

/** A logger that says nothing (this suite runs in every runtime: no pino, which reads the host's name). */
const silent: Logger = { info: () => {}, warn: () => {}, error: () => {} };

/** One turn of the event loop, in any host (a browser has no setImmediate). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('the scheduler', () => {
  it('runs a look asked for during a slow one right after it, once, and never two at once', async () => {
    const clock = manualClock();
    const { store, looks } = slowStore();
    const instance = scheduler({ store, cron: () => ({ ok: false }) as never, send: async () => 'done', clock, log: silent });
    instance.start();
    await settle();
    assert.equal(looks.length, 1, 'the look at start');
    // Three ticks pass while the first look is under way: none starts beside it.
    await clock.advance(3 * SCHEDULE_TICK_MS);
    await settle();
    assert.equal(looks.length, 1, 'no second look at once');
    looks[0]!();
    for (let i = 0; i < 5; i++) await settle();
    assert.equal(looks.length, 2, 'one more look as soon as the slow one ended');
    looks[1]!();
    for (let i = 0; i < 5; i++) await settle();
    assert.equal(looks.length, 2, 'and only one');
    await instance.stop();
  });
});
