import type { Clock } from '../ports/clock.ts';

/**
 * The host's clock: `Date.now` and the standard timers, which every runtime the core runs on has. A
 * chore's timer is unref'd where the host can tell (Node and Bun timers have `unref`; a browser's or
 * Deno's numeric ids have not), so it never keeps a process alive by itself.
 */
export const systemClock: Clock = {
  now: () => Date.now(),
  after(ms, work) {
    const timer = setTimeout(work, ms);
    return () => clearTimeout(timer);
  },
  every(ms, work) {
    const timer: unknown = setInterval(work, ms);
    if (typeof timer === 'object' && timer !== null && 'unref' in timer && typeof timer.unref === 'function') timer.unref();
    return () => clearInterval(timer as ReturnType<typeof setInterval>);
  },
};

/** Resolves once `ms` have passed on `clock` (a retry's back-off). */
export function waited(clock: Clock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.after(ms, resolve));
}
