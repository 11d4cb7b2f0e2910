import { core } from '../packages.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/** `hooks`: hooks in (contract section 12), each with the SHA-256 (hex) of its secret, never the secret. */
export const HookSchema = defineEntity({
  name: 'Hook',
  tableName: 'hooks',
  properties: {
    id: p.uuid().primary(),
    owner: p.text(),
    thread_id: p.uuid().nullable(),
    project: p.text().nullable(),
    model: p.text().nullable(),
    secret_hash: p.text(),
    created_at: p.datetime(),
  },
  indexes: [{ name: 'hooks_owner_index', properties: ['owner'] }],
});

/** `hook_keys`: the call id an idempotency key of a hook names, from `created_at` on for 24 hours. */
export const HookKeySchema = defineEntity({
  name: 'HookKey',
  tableName: 'hook_keys',
  properties: {
    hook_id: p.uuid().primary(),
    key: p.text().primary(),
    call_id: p.uuid(),
    created_at: p.datetime(),
  },
});

/** `schedules`: directives sent at the times a cron expression names; `next_run_at` moves by compare-and-swap as each is claimed. */
export const ScheduleSchema = defineEntity({
  name: 'Schedule',
  tableName: 'schedules',
  properties: {
    id: p.uuid().primary(),
    owner: p.text(),
    cron: p.text(),
    timezone: p.text(),
    text: p.text(),
    thread_id: p.uuid().nullable(),
    project: p.text().nullable(),
    model: p.text().nullable(),
    enabled: p.boolean(),
    next_run_at: p.datetime().nullable(),
    created_at: p.datetime(),
  },
  indexes: [{ name: 'schedules_owner_index', properties: ['owner'] }, { name: 'schedules_next_run_at_index', properties: ['next_run_at'] }],
});

/** `schedule_fires`: a claimed due time until its directive is sent, as the schedule said when it was claimed. */
export const ScheduleFireSchema = defineEntity({
  name: 'ScheduleFire',
  tableName: 'schedule_fires',
  properties: {
    schedule_id: p.uuid().primary(),
    due_at: p.datetime().primary(),
    owner: p.text(),
    text: p.text(),
    thread_id: p.uuid().nullable(),
    project: p.text().nullable(),
    model: p.text().nullable(),
    claimed_at: p.datetime(),
  },
});

/** `webhooks`: webhooks out (contract section 12), each with its signing secret (read only by a claim, never answered). */
export const WebhookSchema = defineEntity({
  name: 'Webhook',
  tableName: 'webhooks',
  properties: {
    id: p.uuid().primary(),
    owner: p.text(),
    url: p.text(),
    events: p.array(),
    thread_ids: p.array().columnType('uuid[]').nullable(),
    secret: p.text(),
    enabled: p.boolean(),
    created_at: p.datetime(),
  },
  indexes: [{ name: 'webhooks_owner_index', properties: ['owner'] }],
});

/**
 * `webhook_deliveries`: the outbox, one row per event and webhook, filled by the trigger on `events` (migration
 * 0025, with the trigger and its function, which the mapping does not describe); claimed under a lease.
 */
export const WebhookDeliverySchema = defineEntity({
  name: 'WebhookDelivery',
  tableName: 'webhook_deliveries',
  properties: {
    id: p.uuid().primary(),
    webhook_id: p.manyToOne(WebhookSchema).mapToPk().fieldName('webhook_id').deleteRule('cascade').updateRule('no action'),
    type: p.text(),
    thread_id: p.uuid(),
    run_id: p.text().nullable(),
    data: p.json(),
    created_at: p.datetime(),
    status: p.text(),
    attempts: p.integer(),
    next_at: p.datetime().nullable(),
    last_status: p.integer().nullable(),
    last_error: p.text().nullable(),
    holder: p.text().nullable(),
    lease_until: p.datetime().nullable(),
  },
  indexes: [
    { name: 'webhook_deliveries_due_index', expression: 'create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_at") where "status" = \'pending\'' },
    { name: 'webhook_deliveries_webhook_index', properties: ['webhook_id', 'created_at'] },
  ],
});
