import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { cronerReader } from '../../adapters/croner/cron.ts';
import { FIRE_LEASE_MS, oneByOne, scheduler } from '../../core/automation/scheduler.ts';
import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import type { Storage } from '../../ports/storage.ts';
import { manualClock } from '../support/manual-clock.ts';
import pino from 'pino';

/** One backend for the suite: a storage, and another over the same data (a second instance). */
export interface ScheduleBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

/** The suite's clock: instants are chosen, never read. A whole minute, so every-minute schedules are due on it. */
const T0 = Date.UTC(2026, 2, 1, 12, 0, 0);
const at = (ms: number) => new Date(T0 + ms).toISOString();
const MINUTE = 60_000;
/** How many schedules fall due at once in the race of two schedulers. */
const MANY = 100;
const silent = pino({ level: 'silent' });

/**
 * The ScheduleStore contract (contract section 12, "Schedules"), and the scheduler over it: schedules kept by
 * their owner; each due time claimed once, whatever the races between instances; a claimed fire kept until done,
 * so one whose instance stopped is sent again; missed times fired once when under an hour old.
 */
export function scheduleStoreContract(name: string, open: () => Promise<ScheduleBackend>): void {
  describe(`schedule store contract: ${name}`, () => {
    let backend: ScheduleBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      other = await backend.reopen();
    });
    after(() => backend.close());
    const store = (): ScheduleStore => backend.storage.schedules;
    const newOwner = () => `user-${randomUUID()}`;
    const schedule = (owner: string, fields: Partial<Schedule> = {}): Schedule => ({
      id: uuidv7(), owner, cron: '* * * * *', timezone: 'UTC', text: 'Report', thread_id: null, project: null, model: null,
      enabled: true, next_run_at: at(0), created_at: at(-MINUTE), ...fields,
    });

    it('a schedule is stored, listed by its owner newest first, changed and removed by its owner only', async () => {
      const owner = newOwner();
      const first = schedule(owner, { project: 'acme-web', model: 'claude:sonnet', timezone: 'Europe/Berlin' });
      const second = schedule(owner, { thread_id: randomUUID(), cron: '*/5 * * * * *' });
      assert.equal(await store().create(first, 10), true);
      assert.equal(await store().create(second, 10), true);
      assert.deepEqual(await other.schedules.list(owner), [second, first]);
      assert.equal(await store().create(schedule(owner), 2), false, 'past max');
      assert.equal(await store().update(newOwner(), first.id, { text: 'x', next_run_at: null }), null, "another's");
      assert.equal(await store().update(owner, 'not-a-uuid', { text: 'x', next_run_at: null }), null);
      const changed = await store().update(owner, first.id, { enabled: false, text: 'Weekly report', next_run_at: at(MINUTE) });
      assert.deepEqual(changed, { ...first, enabled: false, text: 'Weekly report', next_run_at: at(MINUTE) });
      assert.deepEqual((await other.schedules.list(owner)).find((s) => s.id === first.id), changed);
      assert.equal(await store().remove(newOwner(), first.id), false);
      assert.equal(await store().remove(owner, first.id), true);
      assert.equal(await store().remove(owner, first.id), false);
      assert.deepEqual((await store().list(owner)).map((s) => s.id), [second.id]);
    });

    it('a due time is claimed once: the claim moves next_run_at and records the fire, as the schedule holds it then', async () => {
      const owner = newOwner();
      const s = schedule(owner, { next_run_at: at(-5 * MINUTE) });
      await store().create(s, 10);
      assert.ok((await store().due(at(0), 1_000)).some((d) => d.id === s.id));
      assert.ok(!(await store().due(at(-6 * MINUTE), 1_000)).some((d) => d.id === s.id), 'not due before its time');
      await store().update(owner, s.id, { text: 'Changed before the claim', next_run_at: s.next_run_at });
      const claim = { id: s.id, expected: s.next_run_at!, next: at(MINUTE), fire_at: at(0), at: at(0) };
      const [fire] = await store().claim([claim]);
      assert.deepEqual(fire, { schedule_id: s.id, due_at: at(0), owner, text: 'Changed before the claim', thread_id: null, project: null, model: null });
      assert.deepEqual(await other.schedules.claim([claim]), [], 'a second claim of the same due time gets nothing');
      assert.ok(!(await store().due(at(0), 1_000)).some((d) => d.id === s.id), 'moved on');
      assert.deepEqual((await store().reclaim(at(-1), at(1), 1_000)).filter((f) => f.schedule_id === s.id), [], 'claimed after `before`');
      assert.deepEqual((await store().reclaim(at(0), at(1), 1_000)).filter((f) => f.schedule_id === s.id), [fire], 'unfinished: claimed again');
      assert.deepEqual((await other.schedules.reclaim(at(0), at(1), 1_000)).filter((f) => f.schedule_id === s.id), [], 'claimed again at 1: not before its new lease');
      await other.schedules.done([{ schedule_id: s.id, due_at: at(0) }]);
      assert.deepEqual((await store().reclaim(at(5), at(5), 1_000)).filter((f) => f.schedule_id === s.id), [], 'done');
      // A disabled schedule is never due nor claimed; moving on without a fire records none.
      const quiet = schedule(owner, { enabled: false });
      await store().create(quiet, 10);
      assert.ok(!(await store().due(at(0), 1_000)).some((d) => d.id === quiet.id));
      assert.deepEqual(await store().claim([{ id: quiet.id, expected: at(0), next: at(MINUTE), fire_at: at(0), at: at(0) }]), []);
      const skipped = schedule(owner);
      await store().create(skipped, 10);
      assert.deepEqual(await store().claim([{ id: skipped.id, expected: at(0), next: at(MINUTE), fire_at: null, at: at(0) }]), []);
      assert.equal((await store().list(owner)).find((x) => x.id === skipped.id)!.next_run_at, at(MINUTE));
    });

    it('claims made together are each decided as alone: moved on, refused, or fired; and two batches at once share them out', async () => {
      const owner = newOwner();
      const [fired, moved, stale, quiet] = [schedule(owner), schedule(owner), schedule(owner), schedule(owner, { enabled: false })];
      for (const s of [fired, moved, stale, quiet]) await store().create(s, 10);
      const claim = (s: Schedule, fireAt: string | null, expected = s.next_run_at!) => ({ id: s.id, expected, next: at(MINUTE), fire_at: fireAt, at: at(0) });
      const fires = await store().claim([claim(fired, at(0)), claim(moved, null), claim(stale, at(0), at(-MINUTE)), claim(quiet, at(0)), { ...claim(fired, at(0)), id: 'not-a-uuid' }]);
      assert.deepEqual(fires.map((f) => f.schedule_id), [fired.id]);
      const after = new Map((await store().list(owner)).map((s) => [s.id, s.next_run_at]));
      assert.deepEqual([after.get(fired.id), after.get(moved.id), after.get(stale.id), after.get(quiet.id)], [at(MINUTE), at(MINUTE), at(0), at(0)]);
      // The same ten due times claimed by two storages at once: each fired by one of them.
      const many = Array.from({ length: 10 }, () => schedule(owner, { next_run_at: at(0) }));
      for (const s of many) await store().create(s, 20);
      const both = await Promise.all([store().claim(many.map((s) => claim(s, at(0)))), other.schedules.claim([...many].reverse().map((s) => claim(s, at(0))))]);
      const ids = both.flat().map((f) => f.schedule_id);
      assert.equal(ids.length, many.length);
      assert.deepEqual(new Set(ids), new Set(many.map((s) => s.id)));
      await store().done(both.flat());
      assert.deepEqual((await store().reclaim(at(0), at(0), 1_000)).filter((f) => f.owner === owner), [fires[0]]);
      // Unfinished fires claimed again by two storages at once: each by one of them.
      const leftOver = Array.from({ length: 10 }, () => schedule(owner, { next_run_at: at(0) }));
      for (const s of leftOver) await store().create(s, 40);
      await store().claim(leftOver.map((s) => claim(s, at(0))));
      const again = await Promise.all([store().reclaim(at(0), at(MINUTE), 1_000), other.schedules.reclaim(at(0), at(MINUTE), 1_000)]);
      const reclaimed = again.flat().filter((f) => leftOver.some((s) => s.id === f.schedule_id)).map((f) => f.schedule_id);
      assert.equal(reclaimed.length, leftOver.length, 'each claimed again once');
      assert.deepEqual(new Set(reclaimed), new Set(leftOver.map((s) => s.id)));
      await store().done(again.flat());
    });

    it(`two schedulers on one storage fire ${MANY} due schedules each exactly once, minute after minute`, async () => {
      const owner = newOwner();
      for (let i = 0; i < MANY; i += 1) await store().create(schedule(owner), MANY);
      const clock = manualClock(T0);
      const sent: Fire[] = [];
      const send = async (fire: Fire) => {
        sent.push(fire);
        return 'done' as const;
      };
      const one = scheduler({ store: store(), cron: cronerReader, send: oneByOne(send), clock, log: silent });
      const two = scheduler({ store: other.schedules, cron: cronerReader, send: oneByOne(send), clock, log: silent });
      for (let minute = 0; minute < 2; minute += 1) {
        // Each look claims at most a batch (other tests' schedules may be due too): a second look takes the rest.
        await Promise.all([one.tick(), two.tick()]);
        await Promise.all([one.tick(), two.tick()]);
        const fired = sent.filter((f) => f.owner === owner && f.due_at === at(minute * MINUTE));
        assert.equal(fired.length, MANY, `minute ${minute}: ${fired.length} fires`);
        assert.equal(new Set(fired.map((f) => f.schedule_id)).size, MANY, `minute ${minute}: each schedule once`);
        assert.deepEqual((await store().list(owner)).map((s) => s.next_run_at), Array(MANY).fill(at((minute + 1) * MINUTE)));
        await clock.advance(MINUTE);
      }
      assert.equal(sent.filter((f) => f.owner === owner).length, 2 * MANY);
      assert.deepEqual((await store().reclaim(at(10 * MINUTE), at(10 * MINUTE), 1_000)).filter((f) => f.owner === owner), [], 'every fire done');
      for (const s of await store().list(owner)) await store().remove(owner, s.id);
    });

    it('a fire whose instance stopped before sending it is sent again by another after the lease, then done', async () => {
      const owner = newOwner();
      const s = schedule(owner, { cron: '0 * * * *' });
      await store().create(s, 10);
      const clock = manualClock(T0);
      const sent: Fire[] = [];
      const crashed = scheduler({ store: store(), cron: cronerReader, send: async () => { throw new Error('the instance stopped'); }, clock, log: silent });
      const survivor = scheduler({ store: other.schedules, cron: cronerReader, send: oneByOne(async (fire) => (sent.push(fire), 'done')), clock, log: silent });
      await crashed.tick();
      await survivor.tick();
      assert.deepEqual(sent.filter((f) => f.owner === owner), [], 'claimed by the first, not sent again within the lease');
      await clock.advance(FIRE_LEASE_MS);
      await survivor.tick();
      assert.deepEqual(sent.filter((f) => f.owner === owner).map((f) => f.due_at), [at(0)]);
      await survivor.tick();
      assert.equal(sent.filter((f) => f.owner === owner).length, 1, 'done: not sent a third time');
    });

    it('missed times fire once at start when the latest is under an hour old; older ones are skipped', async () => {
      const owner = newOwner();
      const clock = manualClock(T0 + 2 * 3_600_000 + 20 * MINUTE);
      // Hourly at :10: due at 12:10 (two hours ago); the latest, 14:10, is ten minutes old.
      const hourly = schedule(owner, { cron: '10 * * * *', next_run_at: at(10 * MINUTE) });
      // Daily at 13:00: due at 13:00 yesterday... its latest, 13:00 today, is 80 minutes old.
      const daily = schedule(owner, { cron: '0 13 * * *', next_run_at: at(-23 * 3_600_000) });
      await store().create(hourly, 10);
      await store().create(daily, 10);
      const sent: Fire[] = [];
      const instance = scheduler({ store: store(), cron: cronerReader, send: oneByOne(async (fire) => (sent.push(fire), 'done')), clock, log: silent });
      instance.start();
      await instance.stop();
      assert.deepEqual(sent.filter((f) => f.owner === owner).map((f) => [f.schedule_id, f.due_at]), [[hourly.id, at(2 * 3_600_000 + 10 * MINUTE)]]);
      const after = await store().list(owner);
      assert.equal(after.find((s) => s.id === hourly.id)!.next_run_at, at(3 * 3_600_000 + 10 * MINUTE));
      assert.equal(after.find((s) => s.id === daily.id)!.next_run_at, at(25 * 3_600_000), 'the next after now: tomorrow 13:00');
    });
  });
}
