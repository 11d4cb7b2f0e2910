import type { Logger } from 'pino';

/**
 * Whether every agent's first answer is in, for readiness: `warm` (asking each agent what it offers,
 * bounded by the offers' time-out) starts at once; once it has settled this stays true, and reads
 * never wait on an agent again. A warm that failed (the catalog could not be read) is started again
 * at the next look, so readiness still means the agents were asked.
 */
export function agentsKnown(warm: () => Promise<void>, log: Logger): () => boolean {
  let known = false;
  let warming: Promise<void> | null = null;
  const start = (): void => {
    warming = warm().then(
      () => {
        known = true;
      },
      (error: unknown) => {
        log.warn({ err: error }, 'asking the agents what they offer failed');
        warming = null;
      },
    );
  };
  start();
  return () => {
    if (!known && warming === null) start();
    return known;
  };
}
