import type { Clock } from '../../ports/clock.ts';
import type { CronReader } from '../../ports/cron.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Claim, Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import { eachAtMost } from '../each-at-most.ts';
import { periodicLook } from './periodic-look.ts';

/** Due schedules are looked for this often: a six-field expression may name every second. */
export const SCHEDULE_TICK_MS = 1_000;
/** The looks start within this of each whole second on the clock, when cron's times fall due (not up to a second later). */
export const SCHEDULE_WAKE_MS = 50;
/** Fires sent at once one by one (to a thread each); a look's fires to new threads are sent together (bench/schedule-lag.ts). */
export const SCHEDULE_CONCURRENCY = 16;
/** A due time missed (no instance ran) is fired once, at start, only while it is under an hour old. */
export const MISSED_HORIZON_MS = 3_600_000;
/** A fire claimed this long ago and not done is claimed again, by one instance, and sent again (the one that claimed it stopped). */
export const FIRE_LEASE_MS = 60_000;
/** Due schedules claimed per look (in one statement), and fires sent again per look: the next tick takes the rest. */
export const SCHEDULE_BATCH = 250;

/**
 * What sending a fire came to: sent; refused for good, as a directive can be (the owner deactivated, the thread
 * gone, an agent down: that due time is skipped, and why is logged); or failed for now (sent again later, the
 * error logged).
 */
export type FireSent = 'done' | { readonly refused: string } | { readonly failed: unknown };
/** Sends a look's fires, together where it can: what each came to, in their order. Never rejects. */
export type SendFires = (fires: readonly Fire[]) => Promise<FireSent[]>;

/** Sends fires one by one, {@link SCHEDULE_CONCURRENCY} at a time; a send that throws has failed for now. */
export function oneByOne(send: (fire: Fire) => Promise<FireSent>, limit = SCHEDULE_CONCURRENCY): SendFires {
  return async (fires) => {
    const sent: FireSent[] = [];
    let at = 0;
    await eachAtMost(fires.map((fire) => ({ fire, index: at++ })), limit, async ({ fire, index }) => {
      sent[index] = await send(fire).catch((error: unknown) => ({ failed: error }));
    });
    return sent;
  };
}

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

/** A reading of an expression whose steps are each computed once (a look asks the same ones of many schedules). */
function remembered(read: ReturnType<CronReader>): ReturnType<CronReader> {
  if (!read.ok) return read;
  const steps = new Map<number, number | null>();
  return {
    ok: true,
    value: {
      next: (after) => {
        let next = steps.get(after);
        if (next === undefined) steps.set(after, (next = read.value.next(after)));
        return next;
      },
    },
  };
}

/**
 * The scheduler (contract section 12): on every instance, each tick claims the due times of enabled schedules
 * and sends each claimed one. A claim moves the schedule's `next_run_at` by compare-and-swap and records the
 * fire in the same transaction (ScheduleStore.claim), so one instance gets each due time; the fire is marked
 * done once sent, and a fire whose instance stopped before that is claimed again by one instance after
 * {@link FIRE_LEASE_MS} and sent again (the directive's `message_id` is made of the fire's key: sent twice, it runs once).
 * When several due times passed since the last claim (no instance ran), only the latest is fired, and only
 * while it is under an hour old; the next due time is the first after now.
 */
export function scheduler(deps: {
  readonly store: ScheduleStore;
  readonly cron: CronReader;
  readonly send: SendFires;
  readonly clock: Clock;
  readonly log: Logger;
  /** A fire sent (its directive stored, or refused for good), `seconds` after its due time: the schedule lag. */
  readonly observeLag?: (seconds: number) => void;
  /** A number in [0, 1): where in a look's batch this instance starts claiming (Math.random without it). */
  readonly random?: () => number;
}) {
  const random = deps.random ?? Math.random;
  const { store, clock, log } = deps;

  /** Sends fires together, and marks done those sent or refused for good; the rest are sent again after the lease. */
  const finish = async (fires: readonly Fire[]): Promise<void> => {
    if (fires.length === 0) return;
    const outcomes = await deps.send(fires).catch((error: unknown) => fires.map(() => ({ failed: error })));
    const finished = fires.filter((fire, index) => {
      const outcome = outcomes[index] ?? { failed: new Error('no outcome was answered for it') };
      if (typeof outcome === 'object' && 'failed' in outcome) {
        log.warn({ err: outcome.failed, schedule: fire.schedule_id, due_at: fire.due_at }, 'a scheduled directive could not be sent: sent again later');
        return false;
      }
      if (outcome !== 'done') log.warn({ schedule: fire.schedule_id, due_at: fire.due_at, code: outcome.refused }, 'a scheduled directive was refused: that due time is skipped');
      deps.observeLag?.(Math.max(0, clock.now() - Date.parse(fire.due_at)) / 1000);
      return true;
    });
    await store.done(finished).catch((error: unknown) => log.warn({ err: error, fires: finished.length }, 'scheduled fires could not be marked done: sent again later'));
  };

  /** A due schedule's claim: its latest due time (or none: only moved on), and its next after now. */
  const claimOf = (schedule: Schedule, now: number, cron: CronReader): Claim => {
    const read = cron(schedule.cron, schedule.timezone);
    const due = Date.parse(schedule.next_run_at!);
    // A schedule stored with an expression this instance cannot read has no next time: it stops (read again on PATCH).
    const latest = read.ok ? latestDue(read.value, due, now) : null;
    const next = read.ok ? read.value.next(now) : null;
    return {
      id: schedule.id, expected: schedule.next_run_at!, next: next === null ? null : new Date(next).toISOString(),
      fire_at: latest === null ? null : new Date(latest).toISOString(), at: new Date(now).toISOString(),
    };
  };

  /**
   * One look: the due times claimed together and sent together, then fires left unfinished by a stopped instance
   * claimed again (by one instance each) and sent again. Instances look at the same moment (the whole second): a schedule another instance is claiming is
   * skipped, not waited for, and each starts at a place of its own in the batch, so they split it. True when a full
   * batch was looked at and claimed without error: more may wait, and the next look starts at once.
   */
  async function tick(): Promise<boolean> {
    const now = clock.now();
    const due = await store.due(new Date(now).toISOString(), SCHEDULE_BATCH);
    const from = Math.floor(random() * due.length);
    // Each expression and zone read once per look, and each of its steps taken once: the schedules of a look share
    // them (the same times, the same now), and a step in a zone costs a good part of a millisecond.
    const read = new Map<string, ReturnType<CronReader>>();
    const cron: CronReader = (expression, timezone) => {
      const key = `${expression}\u0000${timezone}`;
      let reader = read.get(key);
      if (reader === undefined) read.set(key, (reader = remembered(deps.cron(expression, timezone))));
      return reader;
    };
    const claims = [...due.slice(from), ...due.slice(0, from)].map((schedule) => claimOf(schedule, now, cron));
    let claimed = claims.length > 0;
    const fires = claims.length === 0 ? [] : await store.claim(claims).catch((error: unknown) => {
      claimed = false;
      log.warn({ err: error, schedules: claims.length }, 'due schedules could not be claimed: looked at again next time');
      return [];
    });
    await finish(fires);
    await finish(await store.reclaim(new Date(now - FIRE_LEASE_MS).toISOString(), new Date(now).toISOString(), SCHEDULE_BATCH));
    // Looks again at once only when a full batch was claimed (fires sent again, and claims that fail, wait for the next second).
    return due.length === SCHEDULE_BATCH && claimed;
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
