/** Cancels what a {@link Clock} scheduled; once it ran, or called again, it does nothing. */
export type Cancel = () => void;

/**
 * The time a use case reads and the waits it schedules: leases, retries, deadlines, chores. In a
 * service, the host's own (`systemClock`, core/clock.ts); in a test, a clock moved by hand, so a lease
 * lapses or a timer fires when the test says so, not after a sleep.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Runs `work` once, `ms` from now. While it waits, the host stays up, as for any pending wait. */
  after(ms: number, work: () => void): Cancel;
  /** Runs `work` every `ms` from now on. A chore: the host may exit while only chores are scheduled. */
  every(ms: number, work: () => void): Cancel;
}
