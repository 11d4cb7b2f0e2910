import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkWebhookUrl } from '../../domain/webhook-url.ts';
import type { WebhookEventType } from '../../domain/webhooks.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Webhook, WebhookDelivery, WebhookStore } from '../../ports/webhook-store.ts';
import type { PathAccess } from '../reads/path-access.ts';
import { newWebhookSecret } from './webhook-signature.ts';

/** How many webhooks one person may hold. */
export const MAX_WEBHOOKS_PER_USER = 50;
/** How many of a webhook's latest deliveries its read shows. */
export const RECENT_DELIVERIES = 20;

/** A new webhook as its body gives it: `thread_ids` null for every thread the caller can read. */
export interface NewWebhook {
  readonly url: string;
  readonly events: readonly WebhookEventType[];
  readonly thread_ids: readonly string[] | null;
}

/** A webhook as its owner reads one: with its latest deliveries. */
export interface WebhookView extends Webhook {
  readonly deliveries: readonly WebhookDelivery[];
}

/**
 * Webhooks out (contract section 12), kept by their owner: created (the URL rule checked, each named thread
 * one the caller can read; the secret made here and answered this once), listed and read (never the secret),
 * removed, and one delivery sent again on request. Sending is the sender's (webhook-sender.ts).
 */
export function webhooksOut(deps: {
  readonly store: WebhookStore;
  readonly threadAccess: PathAccess;
  readonly clock: Pick<Clock, 'now'>;
  readonly newId: () => string;
  /** WEBHOOK_ALLOWED_HOSTS, normal (domain/webhook-url.ts). */
  readonly allowedHosts: readonly string[];
  readonly newSecret?: () => string;
}) {
  const { store } = deps;
  return {
    async create(user: User, body: NewWebhook): Promise<Result<{ readonly id: string; readonly secret: string }, Failure>> {
      const url = checkWebhookUrl(body.url, deps.allowedHosts);
      if (!url.ok) return fail({ code: 'validation_failed', errors: [{ path: 'body.url', message: url.error }] });
      for (const threadId of body.thread_ids ?? []) {
        const refused = await deps.threadAccess(user, threadId);
        if (refused !== null) return fail(refused);
      }
      const secret = (deps.newSecret ?? newWebhookSecret)();
      const webhook = {
        id: deps.newId(), owner: user.id, url: url.value, events: [...new Set(body.events)], thread_ids: body.thread_ids === null ? null : [...new Set(body.thread_ids)],
        enabled: true, created_at: new Date(deps.clock.now()).toISOString(), secret,
      };
      return (await store.create(webhook, MAX_WEBHOOKS_PER_USER)) ? ok({ id: webhook.id, secret }) : fail({ code: 'too_many_webhooks' });
    },

    list: (userId: string) => store.list(userId),

    async show(userId: string, id: string): Promise<Result<WebhookView, Failure>> {
      const webhook = await store.find(userId, id);
      if (webhook === null) return fail({ code: 'webhook_not_found' });
      return ok({ ...webhook, deliveries: await store.deliveries(userId, id, RECENT_DELIVERIES) });
    },

    remove: (userId: string, id: string) => store.remove(userId, id),

    /** Sends one delivery again, at once, whatever it came to (a failed one gets one more try, its 24 hours notwithstanding). */
    async retry(userId: string, id: string, deliveryId: string): Promise<Result<WebhookDelivery, Failure>> {
      const webhook = await store.find(userId, id);
      if (webhook === null) return fail({ code: 'webhook_not_found' });
      // A receiver that said 410 Gone is not sent anything again (a retry would wait forever, never claimed).
      if (!webhook.enabled) return fail({ code: 'webhook_disabled' });
      const again = await store.retry(userId, id, deliveryId);
      return again === null ? fail({ code: 'webhook_delivery_not_found' }) : ok(again);
    },
  };
}

export type WebhooksOut = ReturnType<typeof webhooksOut>;
