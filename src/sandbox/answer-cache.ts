/**
 * A bounded map from a request's deciding inputs to the answer they always get, least recently used
 * first out. The proxy page is a pure function of its `policy` text and the origin it is asked on,
 * and one artifact's frame asks for the same policy again and again: a policy seen before costs a
 * lookup, not a JSON parse, two CSPs and a page. Hostile policies can only push others out.
 */
export interface AnswerCache<T> {
  /** The answer kept for `key`, else `make()`'s, kept when `keep` says so. */
  readonly get: (key: string, make: () => T, keep: (answer: T) => boolean) => T;
  readonly size: () => number;
}

export function answerCache<T>(capacity: number): AnswerCache<T> {
  const entries = new Map<string, T>();
  return {
    get(key, make, keep) {
      const kept = entries.get(key);
      if (kept !== undefined) {
        // Re-inserted, so the map's insertion order is the order of last use.
        entries.delete(key);
        entries.set(key, kept);
        return kept;
      }
      const answer = make();
      if (keep(answer)) {
        entries.set(key, answer);
        if (entries.size > capacity) entries.delete(entries.keys().next().value as string);
      }
      return answer;
    },
    size: () => entries.size,
  };
}
