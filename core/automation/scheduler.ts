import type { Clock } from '../../ports/clock.ts';
import type { CronReader } from '../../ports/cron.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import { eachAtMost } from '../each-at-most.ts';
import { periodicLook } from './periodic-look.ts';

/** Due schedules are looked for this often: a six-field expression may name every second. */
export const SCHEDULE_TICK_MS = 1_000;
/** The looks start within this of each whole second on the clock, when cron's times fall due (not up to a second later). */
export const SCHEDULE_WAKE_MS = 50;
/** Claimed due times sent at once: 1,000 schedules due in one second are sent in well under it (bench/schedule-lag.ts). */
export const SCHEDULE_CONCURRENCY = 16;
/** A due time missed (no instance ran) is fired once, at start, only while it is under an hour old. */
export const MISSED_HORIZON_MS = 3_600_000;
/** A fire claimed this long ago and not done is sent again by any instance (the one that claimed it stopped). */
export const FIRE_LEASE_MS = 60_000;
/** Due schedules claimed per look, and fires sent again per look: the next tick takes the rest. */
export const SCHEDULE_BATCH = 100;

/**
 * What sending a fire came to: sent; refused for good, as a directive can be (the owner deactivated, the thread
 * gone, an agent down: that due time is skipped, and why is logged); or failed for now (sent again later).
 */
export type FireSent = 'done' | 'retry' | { readonly refused: string };
export type SendFire = (fire: Fire) => Promise<FireSent>;

/**
 * The latest time the expression names at or before `now`, from the stored due time `due` on, and not older
 * than the horizon; null when there is none such. Steps at most an hour's worth of times (3600 for seconds).
 */
export function latestDue(times: { next(after: number): number | null }, due: number, now: number): number | null {
  const oldest = now - MISSED_HORIZON_MS;
  let at: number | null = due > oldest ? due : times.next(oldest);
  if (at === null || at > now) return null;
  for (let next = times.next(at); next !== null && next <= now; next = times.next(at)) at = next;
  return at;
}

/**
 * The scheduler (contract section 12): on every instance, each tick claims the due times of enabled schedules
 * and sends each claimed one. A claim moves the schedule's `next_run_at` by compare-and-swap and records the
 * fire in the same transaction (ScheduleStore.claim), so one instance gets each due time; the fire is marked
 * done once sent, and a fire whose instance stopped before that is sent again by any instance after
 * {@link FIRE_LEASE_MS} (the directive's `message_id` is made of the fire's key: sent twice, it runs once).
 * When several due times passed since the last claim (no instance ran), only the latest is fired, and only
 * while it is under an hour old; the next due time is the first after now.
 */
export function scheduler(deps: {
  readonly store: ScheduleStore;
  readonly cron: CronReader;
  readonly send: SendFire;
  readonly clock: Clock;
  readonly log: Logger;
  /** A fire sent (its directive stored, or refused for good), `seconds` after its due time: the schedule lag. */
  readonly observeLag?: (seconds: number) => void;
  /** A number in [0, 1): where in a look's batch this instance starts claiming (Math.random without it). */
  readonly random?: () => number;
}) {
  const random = deps.random ?? Math.random;
  const { store, clock, log } = deps;

  const finish = async (fire: Fire): Promise<void> => {
    const outcome = await deps.send(fire).catch((error: unknown) => {
      log.warn({ err: error, schedule: fire.schedule_id, due_at: fire.due_at }, 'a scheduled directive could not be sent: sent again later');
      return 'retry' as const;
    });
    if (outcome === 'retry') return;
    if (outcome !== 'done') log.warn({ schedule: fire.schedule_id, due_at: fire.due_at, code: outcome.refused }, 'a scheduled directive was refused: that due time is skipped');
    deps.observeLag?.(Math.max(0, clock.now() - Date.parse(fire.due_at)) / 1000);
    await store.done(fire.schedule_id, fire.due_at);
  };

  /** Claims one due schedule's latest due time (or only moves it on), and sends what it claimed. */
  const claimOne = async (schedule: Schedule, now: number): Promise<void> => {
    const read = deps.cron(schedule.cron, schedule.timezone);
    const due = Date.parse(schedule.next_run_at!);
    // A schedule stored with an expression this instance cannot read has no next time: it stops (read again on PATCH).
    const latest = read.ok ? latestDue(read.value, due, now) : null;
    const next = read.ok ? read.value.next(now) : null;
    const fire = await store.claim({
      id: schedule.id, expected: schedule.next_run_at!, next: next === null ? null : new Date(next).toISOString(),
      fire_at: latest === null ? null : new Date(latest).toISOString(), at: new Date(now).toISOString(),
    });
    if (fire !== null) await finish(fire);
  };

  /**
   * One look: due times claimed and sent, {@link SCHEDULE_CONCURRENCY} at a time, then fires left unfinished by a
   * stopped instance sent again. Instances look at the same moment (the whole second): each starts at a place of
   * its own in the batch, so they mostly claim different schedules rather than race for the same ones. True when
   * a full batch was claimed: more wait, and the next look starts at once.
   */
  async function tick(): Promise<boolean> {
    const now = clock.now();
    const due = await store.due(new Date(now).toISOString(), SCHEDULE_BATCH);
    const from = Math.floor(random() * due.length);
    let claimed = 0;
    await eachAtMost([...due.slice(from), ...due.slice(0, from)], SCHEDULE_CONCURRENCY, (schedule) =>
      claimOne(schedule, now).then(() => void (claimed += 1), (error: unknown) => log.warn({ err: error, schedule: schedule.id }, 'a due schedule could not be claimed: looked at again next time')));
    const unfinished = await store.unfinished(new Date(now - FIRE_LEASE_MS).toISOString(), SCHEDULE_BATCH);
    await eachAtMost(unfinished, SCHEDULE_CONCURRENCY, (fire) =>
      finish(fire).catch((error: unknown) => log.warn({ err: error, schedule: fire.schedule_id, due_at: fire.due_at }, 'a scheduled fire could not be marked done: sent again later')));
    // Looks again at once only when a full batch moved on (fires sent again, and claims that fail, wait for the next second).
    return due.length === SCHEDULE_BATCH && claimed > 0;
  }

  const looks = periodicLook({ tick, clock, everyMs: SCHEDULE_TICK_MS, wakeMs: SCHEDULE_WAKE_MS, log, failed: 'looking for due schedules failed' });

  return {
    tick,
    /** Looks now (missed due times fire at start), then every {@link SCHEDULE_TICK_MS}; a look asked for during a slow one runs right after it. */
    start: looks.start,
    /** Stops looking; waits for a look under way. */
    stop: looks.stop,
  };
}

export type Scheduler = ReturnType<typeof scheduler>;
