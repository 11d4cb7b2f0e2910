// The scheduler's looks (core/automation/scheduler.ts): one at a time per instance, and a look asked for while
// one is under way is run once more right after it, so a time that fell due during a slow look is not left to
// the next tick; a look starts on each whole second, whenever the instance started; due times are sent several at
// once, and a full batch is followed by the next look at once (1,000 schedules due in one second: bench/schedule-lag.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryScheduleStore } from '../../adapters/memory/schedule-store.ts';
import { SCHEDULE_BATCH, SCHEDULE_CONCURRENCY, SCHEDULE_TICK_MS, SCHEDULE_WAKE_MS, oneByOne, scheduler } from '../../core/automation/scheduler.ts';
import type { CronReader } from '../../ports/cron.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import { manualClock } from '../support/manual-clock.ts';

/** A store with nothing due whose `due` looks wait until the test lets each one go. */
function slowStore() {
  const looks: (() => void)[] = [];
  const store = {
    due: () => new Promise<[]>((resolve) => looks.push(() => resolve([]))),
    reclaim: async () => [],
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
    const instance = scheduler({ store, cron: () => ({ ok: false }) as never, send: async () => [], clock, log: silent });
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

  it('looks within its wake of each whole second on the clock, whatever part of a second it started in', async () => {
    const second = Date.UTC(2025, 0, 1);
    const clock = manualClock(second + 700);
    const looked: number[] = [];
    const store = { due: async () => (looked.push(clock.now()), []), reclaim: async () => [] } as unknown as ScheduleStore;
    const instance = scheduler({ store, cron: () => ({ ok: false }) as never, send: async () => [], clock, log: silent });
    instance.start();
    await clock.advance(300 + SCHEDULE_WAKE_MS);
    await clock.advance(1_000);
    await instance.stop();
    assert.equal(looked.length, 3, `a look at start and one a second: ${looked.map((t) => t - second).join(', ')}`);
    assert.equal(looked[0], second + 700);
    for (const [i, at] of looked.slice(1).entries()) {
      const start = second + (i + 1) * 1_000;
      assert.ok(at >= start && at <= start + SCHEDULE_WAKE_MS, `look ${i + 1} at +${at - second} ms, not within ${SCHEDULE_WAKE_MS} ms of +${start - second}`);
    }
  });

  it(`sends due times ${SCHEDULE_CONCURRENCY} at a time, and after a full batch looks again at once, not a second later`, async () => {
    const clock = manualClock();
    const state = { schedules: new Map<string, Schedule>(), fires: new Map() };
    const store = memoryScheduleStore(state);
    const count = SCHEDULE_BATCH + 50;
    const due = new Date(clock.now()).toISOString();
    for (let i = 0; i < count; i++) {
      const id = `00000000-0000-7000-8000-${String(i).padStart(12, '0')}`;
      await store.create({ id, owner: 'alice', cron: '* * * * * *', timezone: 'UTC', text: `fire ${i}`, thread_id: null, project: null, model: null, enabled: true, next_run_at: due, created_at: due }, count);
    }
    // Every second, as a six-field expression of stars names.
    const everySecond: CronReader = () => ({ ok: true, value: { next: (after) => (Math.floor(after / 1_000) + 1) * 1_000 } });
    const waiting: (() => void)[] = [];
    const sent: Fire[] = [];
    let inFlight = 0;
    let most = 0;
    const send = (fire: Fire) => new Promise<'done'>((resolve) => {
      inFlight += 1;
      most = Math.max(most, inFlight);
      waiting.push(() => {
        inFlight -= 1;
        sent.push(fire);
        resolve('done');
      });
    });
    const instance = scheduler({ store, cron: everySecond, send: oneByOne(send), clock, log: silent, random: () => 0.5 });
    instance.start();
    for (let i = 0; i < 10; i++) await settle();
    assert.equal(inFlight, SCHEDULE_CONCURRENCY, 'as many sent at once as the scheduler allows');
    // Let each send end as it comes; the clock never moves.
    for (let round = 0; round < 200 && sent.length < count; round++) {
      for (const release of waiting.splice(0)) release();
      for (let i = 0; i < 5; i++) await settle();
    }
    await instance.stop();
    assert.equal(most, SCHEDULE_CONCURRENCY, 'never more at once');
    assert.equal(sent.length, count, 'every due time sent in the same second: the batch after a full one did not wait for a tick');
    assert.equal(new Set(sent.map((f) => f.schedule_id)).size, count, 'each once');
    assert.equal(state.fires.size, 0, 'each marked done');
  });
});
