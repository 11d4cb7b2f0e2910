import * as v from 'valibot';
import type { WebhooksOut } from '../../core/automation/webhooks.ts';
import { WEBHOOK_EVENTS } from '../../domain/webhooks.ts';
import type { Webhook } from '../../ports/webhook-store.ts';
import { UuidParam } from '../console-api/schemas.ts';
import { answer, CreatedWebhookInfo, WebhookDeliveryInfo, WebhookDetail, WebhookInfo } from '../http/response-schemas.ts';
import { empty, json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';

const P = '/api/console/webhooks';
/** Webhooks are the caller's own (the create answer holds a secret): never kept by a cache. */
const NO_STORE = { 'cache-control': 'no-store' };

/** A new webhook: its URL (the URL rule is the use case's: 422 at `body.url`), the events it hears of, and the threads (none: every one the caller can read). */
const NewWebhook = v.object({
  url: v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(2000, 'must be at most 2000 characters')),
  events: v.pipe(
    v.array(v.picklist(WEBHOOK_EVENTS, `must be one of ${WEBHOOK_EVENTS.join(', ')}`), 'must be an array of event types'),
    v.nonEmpty('must name at least one event'),
  ),
  thread_ids: v.optional(v.nullable(v.pipe(
    v.array(v.pipe(v.string('must be a string'), v.uuid('must be a thread id')), 'must be an array of thread ids'),
    v.nonEmpty('must name at least one thread, or be absent for every thread'),
    v.maxLength(100, 'must name at most 100 threads'),
  )), null),
});

/** The owner's view of a webhook: the row without its owner (the caller), never a secret. */
const shown = ({ owner: _, ...webhook }: Webhook) => webhook;

/** The caller's webhooks out (CONTRACT section 12, "Webhooks"): create (the secret is in that answer only), list, read with recent deliveries, remove, send a delivery again. */
export function webhookRoutes(webhooks: WebhooksOut): Route[] {
  return [
    route({
      method: 'POST',
      path: P,
      summary: "A new webhook: the caller's threads' events POSTed to a URL, signed as Standard Webhooks says; the secret is shown once",
      operationId: 'createWebhook',
      auth: true,
      body: NewWebhook,
      responses: {
        201: answer('The webhook id, and its signing secret (`whsec_…`), shown once', CreatedWebhookInfo),
        401: 'No valid credential',
        404: 'A thread the caller cannot read (`thread_unavailable`)',
        409: 'The caller holds as many webhooks as allowed (`too_many_webhooks`)',
        422: 'A URL that is not https: (or http: to a host in WEBHOOK_ALLOWED_HOSTS), names a refused address, or carries credentials; an unknown event type (`validation_failed`)',
      },
      handle: async ({ user, body }) => {
        const created = await webhooks.create(user, { url: body.url, events: body.events, thread_ids: body.thread_ids ?? null });
        return created.ok ? json(201, created.value, NO_STORE) : problem(created.error);
      },
    }),
    route({
      method: 'GET',
      path: P,
      summary: "The caller's webhooks, newest first, without their secrets",
      operationId: 'listWebhooks',
      auth: true,
      responses: { 200: answer("The caller's webhooks", v.array(WebhookInfo)), 401: 'No valid credential' },
      handle: async ({ user }) => json(200, (await webhooks.list(user.id)).map(shown), NO_STORE),
    }),
    route({
      method: 'GET',
      path: `${P}/:id`,
      summary: "One of the caller's webhooks, with its latest 20 deliveries and how each went; never its secret",
      operationId: 'getWebhook',
      auth: true,
      params: v.object({ id: UuidParam }),
      responses: { 200: answer('The webhook and its latest deliveries, newest first', WebhookDetail), 401: 'No valid credential', 404: 'The caller has no webhook by this id (`webhook_not_found`)', 422: 'Not a webhook id (`validation_failed`)' },
      handle: async ({ user, params }) => {
        const found = await webhooks.show(user.id, params.id);
        return found.ok ? json(200, shown(found.value), NO_STORE) : problem(found.error);
      },
    }),
    route({
      method: 'DELETE',
      path: `${P}/:id`,
      summary: "Remove one of the caller's webhooks: nothing more of it is sent, on any instance (a try under way ends)",
      operationId: 'removeWebhook',
      auth: true,
      params: v.object({ id: UuidParam }),
      responses: { 204: 'Removed', 401: 'No valid credential', 404: 'The caller has no webhook by this id (`webhook_not_found`)', 422: 'Not a webhook id (`validation_failed`)' },
      handle: async ({ user, params }) => ((await webhooks.remove(user.id, params.id)) ? empty(204) : problem({ code: 'webhook_not_found' })),
    }),
    route({
      method: 'POST',
      path: `${P}/:id/deliveries/:delivery/retry`,
      summary: 'Send one delivery again, at once, with the same webhook-id, whatever its last try came to',
      operationId: 'retryWebhookDelivery',
      auth: true,
      params: v.object({ id: UuidParam, delivery: UuidParam }),
      responses: {
        202: answer('The delivery, pending again', WebhookDeliveryInfo),
        401: 'No valid credential',
        404: 'The caller has no webhook by this id (`webhook_not_found`), or it has no such delivery (`webhook_delivery_not_found`)',
        409: 'The webhook is turned off: its receiver answered 410 (`webhook_disabled`)',
        422: 'Not a webhook or delivery id (`validation_failed`)',
      },
      handle: async ({ user, params }) => {
        const again = await webhooks.retry(user.id, params.id, params.delivery);
        return again.ok ? json(202, again.value, NO_STORE) : problem(again.error);
      },
    }),
  ];
}
