/**
 * Counts events per key in fixed one-minute windows, in this instance's memory (each instance limits
 * on its own: behind N instances a client gets at most N times the limit). The keys kept are bounded:
 * past `maxKeys` the oldest windows are dropped, so a flood of distinct keys costs memory it cannot grow.
 */
export interface WindowLimiter {
  /** Whether `key` has used up its window: the seconds until it may try again, or null. */
  readonly blocked: (key: string) => number | null;
  /** How many more events `key` may count in its window before it is blocked. */
  readonly left: (key: string) => number;
  /** Counts one event for `key`. */
  readonly record: (key: string) => void;
}

export function windowLimiter(options: { readonly limit: number; readonly windowMs?: number; readonly maxKeys?: number; readonly now?: () => number }): WindowLimiter {
  const windowMs = options.windowMs ?? 60_000;
  const maxKeys = options.maxKeys ?? 10_000;
  const now = options.now ?? Date.now;
  const windows = new Map<string, { start: number; count: number }>();
  const current = (key: string) => {
    const found = windows.get(key);
    return found !== undefined && now() - found.start < windowMs ? found : null;
  };
  return {
    blocked(key) {
      const window = current(key);
      if (window === null || window.count < options.limit) return null;
      return Math.max(1, Math.ceil((window.start + windowMs - now()) / 1000));
    },
    left(key) {
      return Math.max(0, options.limit - (current(key)?.count ?? 0));
    },
    record(key) {
      const window = current(key);
      if (window !== null) {
        window.count += 1;
        return;
      }
      windows.delete(key);
      windows.set(key, { start: now(), count: 1 });
      // Insertion order is start order: the first keys are the oldest windows.
      while (windows.size > maxKeys) windows.delete(windows.keys().next().value as string);
    },
  };
}
