/** The first retry of a webhook delivery comes about this long after the first try fails (contract section 12). */
export const WEBHOOK_FIRST_RETRY_MS = 2_000;
/** Two tries of one delivery are never further apart than this. */
export const WEBHOOK_MAX_RETRY_MS = 3_600_000;
/** A delivery is retried for this long after its event, then given up. */
export const WEBHOOK_RETRY_FOR_MS = 24 * 3_600_000;
/** Each wait is its nominal length times a factor drawn from [1 - this, 1 + this]. */
export const WEBHOOK_JITTER = 0.2;

/**
 * How long to wait after the `failures`-th failed try (1 for the first) before the next: 2 s, then twice as
 * long each time, each within ±20 % (`random` in [0, 1), as `Math.random` draws), never over an hour.
 */
export function webhookRetryDelay(failures: number, random: number): number {
  const nominal = Math.min(WEBHOOK_MAX_RETRY_MS, WEBHOOK_FIRST_RETRY_MS * 2 ** Math.max(0, Math.min(failures - 1, 40)));
  const factor = 1 - WEBHOOK_JITTER + 2 * WEBHOOK_JITTER * Math.min(Math.max(random, 0), 1);
  return Math.min(WEBHOOK_MAX_RETRY_MS, Math.round(nominal * factor));
}

/**
 * When a delivery whose event was stored at `since` tries next, after its `failures`-th failed try at `now`
 * (all ms since the epoch); null: never, its 24 hours are over (or would be before that time).
 */
export function nextWebhookTry(since: number, failures: number, now: number, random: number): number | null {
  const at = now + webhookRetryDelay(failures, random);
  return at <= since + WEBHOOK_RETRY_FOR_MS ? at : null;
}
