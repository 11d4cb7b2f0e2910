import { nextWebhookTry } from '../../domain/webhook-retry.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Logger } from '../../ports/logger.ts';
import type { PostWebhook, WebhookOutcome } from '../../ports/webhook-post.ts';
import type { ClaimedDelivery, DeliverySettlement, WebhookStore } from '../../ports/webhook-store.ts';
import { eachAtMost } from '../each-at-most.ts';
import { periodicLook } from './periodic-look.ts';
import { signWebhook } from './webhook-signature.ts';

/** The outbox is looked at this often (a retry is due to the second, the first after 2 s). */
export const WEBHOOK_TICK_MS = 1_000;
/** A claimed delivery is another sender's to take after this long: well past a try's 10 s time-out. */
export const WEBHOOK_LEASE_MS = 60_000;
/** Deliveries claimed per look (at most {@link WEBHOOK_CONCURRENCY} tries at a time: the worst, all timing out, ends well inside the lease). */
export const WEBHOOK_BATCH = 64;
/** Tries under way at once on one instance. */
export const WEBHOOK_CONCURRENCY = 16;
/** Delivered, failed and dropped deliveries are shown this long after their event, then forgotten. */
export const WEBHOOK_KEEP_MS = 7 * 86_400_000;
/** Forgetting old deliveries is done this often. */
const PRUNE_EVERY_MS = 3_600_000;

/** What became of one try, for the metrics: taken, to be tried again, given up, dropped unsent, or its webhook turned off (410). */
export type TryOutcome = 'delivered' | 'retrying' | 'failed' | 'dropped' | 'disabled';

/** The JSON body of a delivery (contract section 12): the same text on every try, so its signature is over the same bytes. */
export const deliveryBody = (d: Pick<ClaimedDelivery, 'type' | 'thread_id' | 'run_id' | 'data' | 'created_at'>): string =>
  JSON.stringify({ type: d.type, thread_id: d.thread_id, run_id: d.run_id, data: d.data, created_at: d.created_at });

/** A few words on a failed try: never the receiver's body, nothing of the secret. */
function whyFailed(outcome: WebhookOutcome): string | null {
  switch (outcome.kind) {
    case 'answered':
      return outcome.status >= 200 && outcome.status < 300 ? null : `answered ${outcome.status}`;
    case 'timed_out':
      return 'no answer in time';
    case 'unreachable':
      return `unreachable: ${outcome.reason}`;
    case 'blocked':
      return `refused: ${outcome.reason}`;
  }
}

/**
 * The webhook sender (contract section 12), on every instance: each look claims due deliveries (a lease, so no
 * two senders try one delivery at once; one whose sender died is due again when its lease ends), checks that
 * the webhook's owner can still read the thread (else the delivery is dropped unsent), signs and POSTs each,
 * and settles it: delivered on a 2xx; on a 410 failed and the webhook turned off; otherwise tried again on the
 * back-off of domain/webhook-retry.ts for 24 hours from the event, then failed. Every try carries the
 * delivery's id as `webhook-id`: a receiver that got one twice (a sender that died after the POST) can tell.
 */
export function webhookSender(deps: {
  readonly store: WebhookStore;
  readonly post: PostWebhook;
  /** Whether a user can read a thread now (an active account, owner or member). */
  readonly canRead: (userId: string, threadId: string) => Promise<boolean>;
  readonly clock: Clock;
  readonly log: Logger;
  /** This instance's id: the holder of what it claims. */
  readonly holder: string;
  /** A number in [0, 1) for the jitter; `Math.random` by default. */
  readonly random?: () => number;
  /** Told of every try's outcome (the metrics). */
  readonly observe?: (outcome: TryOutcome) => void;
}) {
  const { store, clock, log } = deps;
  const random = deps.random ?? Math.random;
  let pruned = 0;

  /** Whether `d`'s owner can read its thread now: asked once per owner and thread in a look (`asked`), not per delivery. */
  const readable = (d: ClaimedDelivery, asked: Map<string, Promise<boolean>>): Promise<boolean> => {
    const key = `${d.owner}\u0000${d.thread_id}`;
    let answer = asked.get(key);
    if (answer === undefined) asked.set(key, (answer = deps.canRead(d.owner, d.thread_id)));
    return answer;
  };

  /** What one try came to: its settlement, what it counts as, and why it failed (null: it did not). */
  interface Tried { readonly d: ClaimedDelivery; readonly settlement: DeliverySettlement; readonly result: TryOutcome; readonly reason: string | null }

  async function attempt(d: ClaimedDelivery, asked: Map<string, Promise<boolean>>): Promise<Tried> {
    const attempts = d.attempts + 1;
    if (!(await readable(d, asked))) {
      const reason = "the webhook's owner can no longer read the thread";
      return { d, result: 'dropped', reason, settlement: { status: 'dropped', attempts: d.attempts, next_at: null, last_status: null, last_error: reason } };
    }
    const body = deliveryBody(d);
    const signed = await signWebhook(d.secret, d.id, clock.now() / 1000, body);
    const outcome = await deps.post({ url: d.url, body, headers: { 'content-type': 'application/json', 'user-agent': 'agent-console-webhooks', ...signed } });
    const status = outcome.kind === 'answered' ? outcome.status : null;
    const error = whyFailed(outcome);
    if (error === null) return { d, result: 'delivered', reason: null, settlement: { status: 'delivered', attempts, next_at: null, last_status: status, last_error: null } };
    if (status === 410) return { d, result: 'disabled', reason: error, settlement: { status: 'failed', attempts, next_at: null, last_status: status, last_error: 'answered 410: the webhook is turned off' } };
    const next = nextWebhookTry(Date.parse(d.created_at), attempts, clock.now(), random());
    return {
      d, result: next === null ? 'failed' : 'retrying', reason: error,
      settlement: { status: next === null ? 'failed' : 'pending', attempts, next_at: next === null ? null : new Date(next).toISOString(), last_status: status, last_error: error },
    };
  }

  /**
   * One look: due deliveries claimed and tried, each on its own, then what each came to written in one write
   * (a 410's webhook turned off after it); now and then, old ones forgotten. True when it claimed a full batch:
   * more may wait, and the next look starts at once (a backlog is not sent a batch a tick).
   */
  async function tick(): Promise<boolean> {
    const now = clock.now();
    if (now - pruned >= PRUNE_EVERY_MS) {
      pruned = now;
      await store.prune(new Date(now - WEBHOOK_KEEP_MS).toISOString());
    }
    const claimed = await store.claim(deps.holder, new Date(now).toISOString(), WEBHOOK_LEASE_MS, WEBHOOK_BATCH);
    if (claimed.length === 0) return false;
    const asked = new Map<string, Promise<boolean>>();
    const tried: Tried[] = [];
    await eachAtMost(claimed, WEBHOOK_CONCURRENCY, async (d) => {
      const one = await attempt(d, asked).catch((error: unknown) => {
        log.warn({ err: error, delivery: d.id, webhook: d.webhook_id }, 'a webhook delivery could not be tried: tried again when its claim lapses');
        return null;
      });
      if (one !== null) tried.push(one);
    });
    const written = await store.settle(deps.holder, tried.map(({ d, settlement }) => ({ id: d.id, ...settlement })));
    for (const { d, result, reason, settlement } of tried) {
      if (!written.has(d.id)) log.warn({ delivery: d.id, webhook: d.webhook_id }, "a webhook delivery's try could not be recorded (its claim lapsed: it may be sent again; or its webhook was removed)");
      if (result === 'disabled') await store.disable(d.webhook_id);
      if (result !== 'delivered') log.info({ delivery: d.id, webhook: d.webhook_id, attempts: settlement.attempts, outcome: result, reason }, 'a webhook delivery failed');
      deps.observe?.(result);
    }
    return claimed.length === WEBHOOK_BATCH;
  }

  const looks = periodicLook({ tick, clock, everyMs: WEBHOOK_TICK_MS, log, failed: 'looking for webhook deliveries failed' });

  return {
    tick,
    /** Looks now (what an earlier start left goes out), then every {@link WEBHOOK_TICK_MS}. */
    start: looks.start,
    /** Looks now (an event was just enqueued), or right after the look under way. */
    poke: looks.poke,
    stop: looks.stop,
  };
}

export type WebhookSender = ReturnType<typeof webhookSender>;
