import type { MikroORM } from '@mikro-orm/postgresql';
import type { ClaimedDelivery, Webhook, WebhookDelivery, WebhookStore } from '../../ports/webhook-store.ts';
import { isUuid, iso, runStatement } from './sql.ts';

const WEBHOOK = `id, owner, url, to_jsonb(events) as events, to_jsonb(thread_ids) as thread_ids, enabled, ${iso('created_at')} as created_at`;
const delivery = (d: string) => `${d}.id, ${d}.webhook_id, ${d}.type, ${d}.thread_id, ${d}.run_id, ${d}.data, ${iso(`${d}.created_at`)} as created_at, ${d}.status,
  ${d}.attempts, ${iso(`${d}.next_at`)} as next_at, ${d}.last_status, ${d}.last_error`;

/**
 * Webhooks in `webhooks`, their outbox in `webhook_deliveries`, filled by the trigger on `events` (migration
 * 0025) in each event's own write, and by `webhook_enqueue` for `merged`. A claim is one statement: the due
 * rows are locked with `for update skip locked` (a second claimer at the same moment skips them, and one that
 * comes after finds their lease running) and leased to the holder; only the holder settles one.
 */
export function mikroOrmWebhookStore(orm: MikroORM): WebhookStore {
  return {
    async create(w, max) {
      const threadIds = w.thread_ids === null ? null : JSON.stringify(w.thread_ids);
      const rows = await runStatement(orm, `insert into webhooks (id, owner, url, events, thread_ids, secret, enabled, created_at)
        select ?::uuid, ?, ?, array(select jsonb_array_elements_text(?::jsonb)), case when ?::jsonb is null then null else array(select jsonb_array_elements_text(?::jsonb)::uuid) end,
          ?, ?::boolean, ?::timestamptz where (select count(*) from webhooks where owner = ?) < ?::int returning id`,
        [w.id, w.owner, w.url, JSON.stringify(w.events), threadIds, threadIds, w.secret, w.enabled, w.created_at, w.owner, max]);
      return rows.length === 1;
    },
    list: (owner) => runStatement<Webhook>(orm, `select ${WEBHOOK} from webhooks where owner = ? order by id desc`, [owner]),
    async find(owner, id) {
      if (!isUuid(id)) return null;
      const [row] = await runStatement<Webhook>(orm, `select ${WEBHOOK} from webhooks where id = ? and owner = ?`, [id, owner]);
      return row ?? null;
    },
    async remove(owner, id) {
      if (!isUuid(id)) return false;
      // Its deliveries go with it (on delete cascade).
      return (await runStatement(orm, 'delete from webhooks where id = ? and owner = ? returning id', [id, owner])).length === 1;
    },
    async enqueue(e) {
      const [row] = await runStatement<{ added: number }>(orm, 'select webhook_enqueue(?::uuid, ?, ?, ?::jsonb, ?::timestamptz) as added',
        [e.thread_id, e.type, e.run_id, JSON.stringify(e.data), e.created_at]);
      return row?.added ?? 0;
    },
    claim: (holder, now, leaseMs, limit) => runStatement<ClaimedDelivery>(orm, `update webhook_deliveries d
        set holder = ?, lease_until = ?::timestamptz + make_interval(secs => ?::double precision / 1000)
        from webhooks w
        where w.id = d.webhook_id and d.id in (
          select c.id from webhook_deliveries c join webhooks cw on cw.id = c.webhook_id
          where c.status = 'pending' and cw.enabled and (c.next_at is null or c.next_at <= ?::timestamptz)
            and (c.lease_until is null or c.lease_until <= ?::timestamptz)
          order by c.next_at nulls first, c.id limit ? for update of c skip locked)
        returning ${delivery('d')}, w.owner, w.url, w.secret`, [holder, now, leaseMs, now, now, limit]),
    async settle(holder, settlements) {
      if (settlements.length === 0) return new Set();
      const rows = await runStatement<{ id: string }>(orm, `update webhook_deliveries d set status = x.status, attempts = x.attempts, next_at = x.next_at,
          last_status = x.last_status, last_error = x.last_error, holder = null, lease_until = null
        from jsonb_to_recordset(?::jsonb) as x(id uuid, status text, attempts int, next_at timestamptz, last_status int, last_error text)
        where d.id = x.id and d.holder = ? and d.status = 'pending' returning d.id`, [JSON.stringify(settlements), holder]);
      return new Set(rows.map((row) => row.id));
    },
    async disable(webhookId) {
      await runStatement(orm, 'update webhooks set enabled = false where id = ?', [webhookId]);
    },
    async deliveries(owner, webhookId, limit) {
      if (!isUuid(webhookId)) return [];
      return runStatement<WebhookDelivery>(orm, `select ${delivery('d')} from webhook_deliveries d join webhooks w on w.id = d.webhook_id
        where d.webhook_id = ? and w.owner = ? order by d.created_at desc, d.id desc limit ?`, [webhookId, owner, limit]);
    },
    async retry(owner, webhookId, deliveryId) {
      if (!isUuid(webhookId) || !isUuid(deliveryId)) return null;
      // One under a sender's claim stays that sender's: it is not tried twice at once.
      const [row] = await runStatement<WebhookDelivery>(orm, `update webhook_deliveries d set next_at = null,
          holder = case when d.status = 'pending' then d.holder else null end,
          lease_until = case when d.status = 'pending' then d.lease_until else null end, status = 'pending'
        from webhooks w where w.id = d.webhook_id and d.id = ? and d.webhook_id = ? and w.owner = ? returning ${delivery('d')}`, [deliveryId, webhookId, owner]);
      return row ?? null;
    },
    async depth() {
      const [row] = await runStatement<{ pending: number; oldest: string | null }>(orm, `select count(*)::int as pending, ${iso('min(d.created_at)')} as oldest
        from webhook_deliveries d join webhooks w on w.id = d.webhook_id where d.status = 'pending' and w.enabled`, []);
      return { pending: row?.pending ?? 0, oldest: row?.oldest ?? null };
    },
    async prune(before) {
      await runStatement(orm, `delete from webhook_deliveries where status <> 'pending' and created_at < ?::timestamptz`, [before]);
    },
  };
}
