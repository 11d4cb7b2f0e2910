import type { Cancel, Clock } from '../../ports/clock.ts';
import type { Logger } from '../../ports/logger.ts';

/**
 * A look run now and then every `everyMs` on the injected clock, one at a time per instance: a look asked for
 * while one is under way (a tick, or a poke) runs once more right after it, so what fell due during a slow
 * look is looked at as soon as it ends, not a tick later; so is a look that answers true (it took a full batch:
 * more waits). A failed look is logged as `failed` and the next one goes on.
 */
export function periodicLook(deps: {
  readonly tick: () => Promise<boolean | void>;
  readonly clock: Pick<Clock, 'every' | 'now'>;
  readonly everyMs: number;
  /**
   * With it, the timer wakes this often and a look starts on the first wake of each period of `everyMs` on the
   * clock (at most `wakeMs` after the period's start: a time due on the whole second is looked at within
   * `wakeMs`, not up to a period later, whenever the instance started). Without it, a look every `everyMs` from start.
   */
  readonly wakeMs?: number;
  readonly log: Logger;
  readonly failed: string;
}) {
  let ticking: Promise<void> | null = null;
  let stop: Cancel | null = null;
  let again = false;
  let period = Number.NaN;

  const look = (): Promise<void> => {
    if (ticking !== null) {
      again = true;
      return ticking;
    }
    ticking = deps.tick()
      .then((more) => {
        if (more === true) again = true;
      })
      .catch((error: unknown) => deps.log.warn({ err: error }, deps.failed))
      .finally(() => {
        ticking = null;
        if (again && stop !== null) {
          again = false;
          void look();
        }
      });
    return ticking;
  };

  return {
    /** Looks now, then every `everyMs` (on each period's first wake, with `wakeMs`). */
    start(): void {
      const { wakeMs, everyMs, clock } = deps;
      period = Math.floor(clock.now() / everyMs);
      void look();
      if (wakeMs === undefined) {
        stop = clock.every(everyMs, () => void look());
        return;
      }
      stop = clock.every(wakeMs, () => {
        const now = Math.floor(clock.now() / everyMs);
        if (now === period) return;
        period = now;
        void look();
      });
    },
    /** Looks now, or right after the look under way. */
    poke: (): void => void look(),
    /** Stops looking; waits for a look under way. */
    async stop(): Promise<void> {
      stop?.();
      stop = null;
      again = false;
      await ticking;
    },
  };
}
