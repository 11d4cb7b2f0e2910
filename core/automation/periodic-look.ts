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
  readonly clock: Pick<Clock, 'every'>;
  readonly everyMs: number;
  readonly log: Logger;
  readonly failed: string;
}) {
  let ticking: Promise<void> | null = null;
  let stop: Cancel | null = null;
  let again = false;

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
    /** Looks now, then every `everyMs`. */
    start(): void {
      void look();
      stop = deps.clock.every(deps.everyMs, () => void look());
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
