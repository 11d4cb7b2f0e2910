import type { Delivery, DeliveryOutbox, QueuedDelivery } from '../../ports/delivery-outbox.ts';

/** The outbox in memory: only deliveries not yet taken, each with its attempts, when it is due, and its claim. */
export interface MemoryOutbox extends DeliveryOutbox {
  /** Adds a delivery, due now (a move's write calls it in the same synchronous step). */
  enqueue(delivery: Delivery): void;
}

/** One delivery in the outbox: what it is, when it is due (or its claim lapses), and who claimed it. */
export interface OutboxEntry {
  delivery: QueuedDelivery;
  due: number;
  holder: string | null;
}

/** A delivery as the outbox keeps it: what it asks and whom it is for null when absent, as a database row answers them. */
function queued(delivery: Delivery): QueuedDelivery {
  return { ...delivery, ask: delivery.ask ?? null, to: delivery.to ?? null, attempts: 0, handed_before: false };
}

/** The outbox over the state's entries (insertion order is id order, UUIDv7: the oldest is claimed first). */
export function memoryDeliveryOutbox(entries: Map<string, OutboxEntry>, now: () => number = Date.now): MemoryOutbox {
  return {
    enqueue(delivery) {
      entries.set(delivery.id, { delivery: queued(delivery), due: now(), holder: null });
    },
    async add(delivery) {
      if (!entries.has(delivery.id)) entries.set(delivery.id, { delivery: queued(delivery), due: now(), holder: null });
    },
    async claimDue(holder, leaseMs, limit) {
      const at = now();
      const claimed: QueuedDelivery[] = [];
      for (const entry of entries.values()) {
        if (claimed.length >= limit) break;
        if (entry.due > at) continue;
        // Claimed before and not put back (its holder died), or refused before: a channel may hold its post.
        const handedBefore = entry.holder !== null || entry.delivery.attempts > 0;
        entry.holder = holder;
        entry.due = at + leaseMs;
        claimed.push({ ...entry.delivery, handed_before: handedBefore });
      }
      return claimed;
    },
    async delivered(id) {
      entries.delete(id);
    },
    async retryLater(id, retryInMs) {
      const entry = entries.get(id);
      if (entry === undefined) return;
      entry.delivery = { ...entry.delivery, attempts: entry.delivery.attempts + 1 };
      entry.due = now() + retryInMs;
      entry.holder = null;
    },
  };
}
