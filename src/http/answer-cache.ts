/**
 * A bounded map from a request's deciding inputs to the answer they always get, least recently used
 * first out. The sandbox proxy page is a pure function of its query and the origin it is asked on,
 * and one artifact's frame asks for the same policy again and again: a policy seen before costs a
 * lookup, not a query parse, a JSON parse, two CSPs and a page (route.ts, `memo`). Hostile keys can
 * only push others out.
 */
export interface AnswerCache<T> {
  /** The answer kept for `key`, else `make()`'s, kept when `keep` says so. */
  readonly get: (key: string, make: () => T, keep: (answer: T) => boolean) => T;
  /** The answer kept for `key` (now the most recently used), or undefined. */
  readonly peek: (key: string) => T | undefined;
  /** Keeps `answer` for `key`, pushing the least recently used out past the capacity. */
  readonly put: (key: string, answer: T) => void;
  readonly size: () => number;
}

export function answerCache<T>(capacity: number): AnswerCache<T> {
  const entries = new Map<string, T>();
  const peek = (key: string): T | undefined => {
    const kept = entries.get(key);
    if (kept !== undefined && entries.size > 1) {
      // Re-inserted, so the map's insertion order is the order of last use.
      entries.delete(key);
      entries.set(key, kept);
    }
    return kept;
  };
  const put = (key: string, answer: T): void => {
    entries.delete(key);
    entries.set(key, answer);
    if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
  };
  return {
    get(key, make, keep) {
      const kept = peek(key);
      if (kept !== undefined) return kept;
      const answer = make();
      if (keep(answer)) put(key, answer);
      return answer;
    },
    peek,
    put,
    size: () => entries.size,
  };
}
