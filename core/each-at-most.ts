/**
 * Runs `work` on each item, at most `limit` at a time, in the items' order; resolves once all have ended. `work`
 * must not reject (each catches what it can come to): one that does rejects the whole, the others still running.
 */
export async function eachAtMost<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}
