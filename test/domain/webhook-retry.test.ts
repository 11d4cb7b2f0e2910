import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { nextWebhookTry, WEBHOOK_FIRST_RETRY_MS, WEBHOOK_MAX_RETRY_MS, WEBHOOK_RETRY_FOR_MS, webhookRetryDelay } from '../../domain/webhook-retry.ts';

const random = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true });
const failures = fc.integer({ min: 1, max: 200 });

describe('webhook retry schedule (contract section 12)', () => {
  it('the first retry comes about 2 s later (±20 %)', () => {
    fc.assert(fc.property(random, (r) => {
      const delay = webhookRetryDelay(1, r);
      assert.ok(delay >= 1_600 && delay <= 2_400, `${delay}`);
    }));
  });

  it('each wait is about twice the one before (±20 % each) until the cap, and never over an hour', () => {
    fc.assert(fc.property(failures, random, (n, r) => {
      const delay = webhookRetryDelay(n, r);
      const nominal = Math.min(WEBHOOK_MAX_RETRY_MS, WEBHOOK_FIRST_RETRY_MS * 2 ** (n - 1));
      assert.ok(delay >= Math.floor(nominal * 0.8) && delay <= Math.ceil(nominal * 1.2), `${n}: ${delay} vs ${nominal}`);
      assert.ok(delay <= WEBHOOK_MAX_RETRY_MS);
      assert.ok(delay > 0);
    }));
  });

  it('the jitter spreads: the same failure with other draws gives other waits, monotone in the draw', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 10 }), random, random, (n, a, b) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      assert.ok(webhookRetryDelay(n, lo) <= webhookRetryDelay(n, hi));
    }));
    assert.ok(webhookRetryDelay(3, 0) < webhookRetryDelay(3, 0.99));
  });

  it('tries stop once the next would come more than 24 h after the event; before that there is always a next', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 2 * WEBHOOK_RETRY_FOR_MS }), failures, random, (elapsed, n, r) => {
      const since = Date.UTC(2026, 0, 1);
      const now = since + elapsed;
      const next = nextWebhookTry(since, n, now, r);
      if (next === null) assert.ok(now + webhookRetryDelay(n, r) > since + WEBHOOK_RETRY_FOR_MS);
      else {
        assert.equal(next, now + webhookRetryDelay(n, r));
        assert.ok(next <= since + WEBHOOK_RETRY_FOR_MS);
      }
    }));
  });

  it('a receiver that always fails is tried for 24 h, each wait at most an hour: about 30 tries, the last within the day', () => {
    fc.assert(fc.property(fc.array(random, { minLength: 200, maxLength: 200 }), (draws) => {
      const since = 0;
      let now = since;
      let tries = 1;
      for (const r of draws) {
        const next = nextWebhookTry(since, tries, now, r);
        if (next === null) break;
        assert.ok(next - now <= WEBHOOK_MAX_RETRY_MS);
        now = next;
        tries += 1;
      }
      assert.ok(now <= WEBHOOK_RETRY_FOR_MS && now > WEBHOOK_RETRY_FOR_MS - 1.2 * WEBHOOK_MAX_RETRY_MS, `last try at ${now}`);
      assert.ok(tries >= 25 && tries <= 40, `${tries} tries`);
    }));
  });
});
