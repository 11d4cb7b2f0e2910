import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { answerCache } from '../../src/http/answer-cache.ts';

describe('the answer cache', () => {
  it('answers what make() answers, keeps at most its capacity, and drops the least recently used first', () => {
    // Model: the kept keys in order of last use, against a cache of capacity 3 over a small key space.
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 6 }), fc.boolean()), { maxLength: 60 }), (steps) => {
        const cache = answerCache<string>(3);
        let kept: number[] = [];
        for (const [key, keep] of steps) {
          let made = 0;
          const answer = cache.get(String(key), () => (made++, `answer ${key}`), () => keep);
          assert.equal(answer, `answer ${key}`);
          if (kept.includes(key)) {
            assert.equal(made, 0, `key ${key} was kept, yet made again`);
            kept = [...kept.filter((k) => k !== key), key];
          } else {
            assert.equal(made, 1);
            if (keep) kept = [...kept, key].slice(-3);
          }
          assert.equal(cache.size(), kept.length);
        }
      }),
    );
  });
});
