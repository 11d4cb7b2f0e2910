import type { Cancel, Clock } from '../../ports/clock.ts';

/** A clock a test moves by hand: what it schedules runs only as {@link ManualClock.advance} passes its time. */
export interface ManualClock extends Clock {
  /**
   * Moves time on by `ms`, running what falls due in order of its time (then of its scheduling); after
   * each, the work it set off runs as far as it can without the clock (a turn of the event loop).
   */
  advance(ms: number): Promise<void>;
  /** How many timers are scheduled. */
  readonly scheduled: number;
}

interface Timer {
  at: number;
  readonly every: number | null;
  readonly work: () => void;
}

/** A manual clock at `start` (ms since the epoch). Plain code: it runs wherever the core's tests do. */
export function manualClock(start = Date.UTC(2025, 0, 1)): ManualClock {
  let now = start;
  let ids = 0;
  const timers = new Map<number, Timer>();
  const schedule = (ms: number, every: number | null, work: () => void): Cancel => {
    const id = ids++;
    timers.set(id, { at: now + Math.max(0, ms), every, work });
    return () => void timers.delete(id);
  };
  return {
    now: () => now,
    after: (ms, work) => schedule(ms, null, work),
    every: (ms, work) => schedule(ms, Math.max(1, ms), work),
    get scheduled() {
      return timers.size;
    },
    async advance(ms) {
      const until = now + ms;
      for (;;) {
        let next: [number, Timer] | undefined;
        for (const entry of timers) if (entry[1].at <= until && (next === undefined || entry[1].at < next[1].at)) next = entry;
        if (next === undefined) break;
        const [id, timer] = next;
        now = timer.at;
        if (timer.every === null) timers.delete(id);
        else timer.at += timer.every;
        timer.work();
        await settled();
      }
      now = until;
      await settled();
    },
  };
}

/** One turn of the host's event loop: every promise already queued settles first (setImmediate where the host has it: no 1 ms floor). */
const settled = () => new Promise<void>((resolve) => (typeof globalThis.setImmediate === 'function' ? globalThis.setImmediate(resolve) : setTimeout(resolve, 0)));
