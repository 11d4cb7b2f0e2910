import type { MikroORM } from '@mikro-orm/postgresql';
import type { Delivery, DeliveryOutbox, QueuedDelivery } from '../../ports/delivery-outbox.ts';
import { isUuid, runStatement } from './sql.ts';

/** A delivery's ask as its `jsonb` parameter: SQL null when it asks nothing (never the JSON `null`). */
export function askJson(delivery: Delivery): string | null {
  return delivery.ask == null ? null : JSON.stringify(delivery.ask);
}

/**
 * The outbox in the `deliveries` table. A claim takes due rows with `for update skip locked`, so two
 * instances never claim one delivery, and pushes `due_at` to the claim's end: a holder that dies
 * leaves it due again then. Taken deliveries are deleted.
 */
export function mikroOrmDeliveryOutbox(orm: MikroORM): DeliveryOutbox {
  return {
    claimDue: (holder, leaseMs, limit) =>
      runStatement<QueuedDelivery>(orm, `
        update deliveries d set holder = ?, due_at = now() + make_interval(secs => ?)
        from (select id, holder from deliveries where due_at <= now() order by id limit ? for update skip locked) due
        where d.id = due.id
        returning d.id, d.channel, d.place, d.new_thread, d.address, d.title, d.text, d.ask, d.recipient as "to", d.attempts,
          (due.holder is not null or d.attempts > 0) as handed_before`,
      [holder, leaseMs / 1000, limit]).then((rows) => rows.sort((a, b) => (a.id < b.id ? -1 : 1))),

    async add(d) {
      await runStatement(orm, `insert into deliveries (id, channel, place, new_thread, address, title, text, ask, recipient, attempts, due_at, holder)
        values (?, ?, ?, ?, ?::jsonb, ?, ?, ?::jsonb, ?, 0, now(), null) on conflict (id) do nothing`,
      [d.id, d.channel, d.place, d.new_thread, JSON.stringify(d.address), d.title, d.text, askJson(d), d.to ?? null]);
    },

    async delivered(id) {
      if (isUuid(id)) await runStatement(orm, 'delete from deliveries where id = ?', [id]);
    },

    async retryLater(id, retryInMs) {
      if (!isUuid(id)) return;
      await runStatement(orm, `update deliveries set attempts = attempts + 1, holder = null, due_at = now() + make_interval(secs => ?) where id = ?`, [retryInMs / 1000, id]);
    },
  };
}
