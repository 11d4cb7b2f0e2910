import type { WebhookEventType } from '../domain/webhooks.ts';

/**
 * A webhook out (contract section 12): the events of threads its owner can read, POSTed to `url`, signed with
 * its secret. `thread_ids` null: every thread its owner can read, now and later.
 */
export interface Webhook {
  readonly id: string;
  readonly owner: string;
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  readonly thread_ids: readonly string[] | null;
  /** False once its receiver answered 410 Gone: nothing more is sent. */
  readonly enabled: boolean;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/**
 * A webhook as stored: with its signing secret (`whsec_…`). The secret is kept as it is, since every send
 * signs with it; it is returned by nothing but {@link WebhookStore.claim}, to the sender.
 */
export interface StoredWebhook extends Webhook {
  readonly secret: string;
}

/** Where a delivery is: waiting to be sent (again), taken by its receiver, given up, or dropped unsent. */
export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dropped';

/** One event for one webhook, as the outbox keeps it until it is delivered (and for a while after, to be shown). */
export interface WebhookDelivery {
  /** The `webhook-id` of every try. */
  readonly id: string;
  readonly webhook_id: string;
  readonly type: WebhookEventType;
  readonly thread_id: string;
  readonly run_id: string | null;
  readonly data: Readonly<Record<string, unknown>>;
  /** ISO 8601: when the event was stored; the 24 hours of retries count from it. */
  readonly created_at: string;
  readonly status: DeliveryStatus;
  /** Tries made so far. */
  readonly attempts: number;
  /** ISO 8601: when a pending delivery is tried next; null: at once. */
  readonly next_at: string | null;
  /** The HTTP status of the last try's answer; null when it had none (not tried, timed out, refused). */
  readonly last_status: number | null;
  /** Why the last try failed, in a few words (never the receiver's body); null when it did not. */
  readonly last_error: string | null;
}

/** A delivery claimed by a sender: with what sending it needs, read under the claim. */
export interface ClaimedDelivery extends WebhookDelivery {
  readonly owner: string;
  readonly url: string;
  readonly secret: string;
}

/** An event a webhook may be told of: the thread's, of one of the six types. */
export interface WebhookEvent {
  readonly type: WebhookEventType;
  readonly thread_id: string;
  readonly run_id: string | null;
  readonly data: Readonly<Record<string, unknown>>;
  /** ISO 8601. */
  readonly created_at: string;
}

/** What a try came to, written only while the claim holds. */
export interface DeliverySettlement {
  readonly status: DeliveryStatus;
  readonly attempts: number;
  readonly next_at: string | null;
  readonly last_status: number | null;
  readonly last_error: string | null;
}

/** A delivery's settlement, named by its id. */
export interface Settled extends DeliverySettlement {
  readonly id: string;
}

/**
 * Webhooks and their durable outbox. Events are put in the outbox in the write that stores them: the event
 * log's appends (every `run_finished`, `run_error`, `approval_requested`, `question_asked` and `queued`) do it
 * themselves, one row per enabled webhook that subscribes to the type, names the thread (or none) and whose
 * owner can read the thread then; {@link enqueue} does it for an event that is not in the log (`merged`).
 * A delivery is sent by one sender at a time: {@link claim} leases it, and only the lease's holder settles it.
 */
export interface WebhookStore {
  /** Stores a webhook; false (nothing stored) when its owner holds `max` already. */
  create(webhook: StoredWebhook, max: number): Promise<boolean>;
  /** The owner's webhooks, newest first, without their secrets. */
  list(owner: string): Promise<Webhook[]>;
  /** One of the owner's webhooks, without its secret; null when the owner has none by that id. */
  find(owner: string, id: string): Promise<Webhook | null>;
  /** Removes one of the owner's webhooks and its deliveries; false when the owner has none by that id. */
  remove(owner: string, id: string): Promise<boolean>;
  /** Puts `event` in the outbox for every webhook it matches (as the log's appends do), due now; answers how many. */
  enqueue(event: WebhookEvent): Promise<number>;
  /**
   * Claims up to `limit` pending deliveries of enabled webhooks that are due at `now` (ISO 8601: `next_at`
   * null, or at or before it) and not claimed by a lease still running, the earliest due first (null first,
   * then by `next_at`), for `holder` until `now` + `leaseMs`.
   */
  claim(holder: string, now: string, leaseMs: number, limit: number): Promise<ClaimedDelivery[]>;
  /**
   * Writes what each try of a look came to and ends their claims, in one write; answers the ids written (one
   * `holder` no longer holds is left as it is, and out of the answer).
   */
  settle(holder: string, settlements: readonly Settled[]): Promise<ReadonlySet<string>>;
  /** Turns a webhook off (its receiver answered 410): nothing of it is claimed any more. */
  disable(webhookId: string): Promise<void>;
  /** A webhook's latest deliveries, newest first, at most `limit`; [] when the owner has no such webhook. */
  deliveries(owner: string, webhookId: string, limit: number): Promise<WebhookDelivery[]>;
  /** Makes one of the owner's deliveries pending again, due at once, whatever it came to; null when there is none such. */
  retry(owner: string, webhookId: string, deliveryId: string): Promise<WebhookDelivery | null>;
  /** Pending deliveries of enabled webhooks: how many, and when the oldest's event was stored (null: none). */
  depth(): Promise<{ readonly pending: number; readonly oldest: string | null }>;
  /** Forgets delivered, failed and dropped deliveries whose event is older than `before` (ISO 8601). */
  prune(before: string): Promise<void>;
}
