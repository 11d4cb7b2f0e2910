/** Times `fn` `runs` times after `warmup` untimed runs; answers milliseconds per run, sorted. */
export async function sample(fn: () => Promise<unknown>, runs: number, warmup = Math.ceil(runs / 5)): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

/** The q-quantile of sorted samples (nearest rank). */
export const quantile = (sorted: readonly number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

/** `1.23` with a fixed number of decimals. */
export const fixed = (value: number, digits = 3): string => value.toFixed(digits);
