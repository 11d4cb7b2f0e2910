import { uuidv7 } from 'uuidv7';
import { canAccessThread } from '../../domain/thread-access.ts';
import type { ClaimedDelivery, StoredWebhook, Webhook, WebhookDelivery, WebhookEvent, WebhookStore } from '../../ports/webhook-store.ts';

/** A delivery as memory keeps it: with its claim (holder, and when the lease ends, ms since the epoch). */
interface MemoryDelivery extends WebhookDelivery {
  readonly holder: string | null;
  readonly lease_until: number | null;
}

/** What the memory adapter keeps of webhooks: webhooks by id (with their secrets) and their deliveries by id. */
export interface MemoryWebhooks {
  readonly webhooks: Map<string, StoredWebhook>;
  readonly deliveries: Map<string, MemoryDelivery>;
}

/** What the enqueue needs of the rest of the state: whether a user can read a thread now. */
interface ThreadsView {
  readonly threads: ReadonlyMap<string, { readonly owner: string }>;
  readonly members: ReadonlyMap<string, ReadonlySet<string>>;
}

const shown = ({ secret: _, ...webhook }: StoredWebhook): Webhook => webhook;
const bare = ({ holder: _h, lease_until: _l, ...delivery }: MemoryDelivery): WebhookDelivery => delivery;
const newestFirst = (a: { id: string }, b: { id: string }) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const ms = (iso: string) => Date.parse(iso);
/** A delivery with no `next_at` is due at once, whatever the clock says (its event's time is the database's). */
const dueAt = (d: WebhookDelivery) => (d.next_at === null ? Number.NEGATIVE_INFINITY : ms(d.next_at));

/**
 * Puts an event in the outbox for every webhook it matches: enabled, subscribed to its type, naming its thread
 * (or none), and whose owner can read the thread now. Synchronous, so the event log's append does it in the
 * same step as it stores the event (adapters/memory/event-log.ts): both or neither.
 */
export function enqueueWebhookEvent(state: MemoryWebhooks, view: ThreadsView, event: WebhookEvent): number {
  const thread = view.threads.get(event.thread_id);
  if (thread === undefined) return 0;
  let count = 0;
  for (const webhook of state.webhooks.values()) {
    if (!webhook.enabled || !webhook.events.includes(event.type)) continue;
    if (webhook.thread_ids !== null && !webhook.thread_ids.includes(event.thread_id)) continue;
    if (!canAccessThread(webhook.owner, thread, [...(view.members.get(event.thread_id) ?? [])])) continue;
    const id = uuidv7();
    state.deliveries.set(id, {
      id, webhook_id: webhook.id, type: event.type, thread_id: event.thread_id, run_id: event.run_id, data: structuredClone(event.data),
      created_at: new Date(ms(event.created_at)).toISOString(), status: 'pending', attempts: 0, next_at: null, last_status: null, last_error: null, holder: null, lease_until: null,
    });
    count += 1;
  }
  return count;
}

/** Webhooks in memory; each method checks and writes without an `await` in between, so a delivery is claimed by one holder. */
export function memoryWebhookStore(state: MemoryWebhooks, view: ThreadsView): WebhookStore {
  const owned = (owner: string, id: string) => {
    const webhook = state.webhooks.get(id);
    return webhook !== undefined && webhook.owner === owner ? webhook : null;
  };
  return {
    async create(webhook, max) {
      if ([...state.webhooks.values()].filter((w) => w.owner === webhook.owner).length >= max) return false;
      state.webhooks.set(webhook.id, structuredClone(webhook));
      return true;
    },
    list: async (owner) => [...state.webhooks.values()].filter((w) => w.owner === owner).sort(newestFirst).map(shown),
    async find(owner, id) {
      const webhook = owned(owner, id);
      return webhook === null ? null : shown(webhook);
    },
    async remove(owner, id) {
      if (owned(owner, id) === null) return false;
      state.webhooks.delete(id);
      for (const [key, d] of state.deliveries) if (d.webhook_id === id) state.deliveries.delete(key);
      return true;
    },
    enqueue: async (event) => enqueueWebhookEvent(state, view, event),
    async claim(holder, now, leaseMs, limit) {
      const at = ms(now);
      const due = [...state.deliveries.values()]
        .filter((d) => d.status === 'pending' && dueAt(d) <= at && (d.lease_until === null || d.lease_until <= at) && state.webhooks.get(d.webhook_id)?.enabled === true)
        .sort((a, b) => (dueAt(a) === dueAt(b) ? (a.id < b.id ? -1 : 1) : dueAt(a) < dueAt(b) ? -1 : 1))
        .slice(0, limit);
      return due.map((d): ClaimedDelivery => {
        state.deliveries.set(d.id, { ...d, holder, lease_until: at + leaseMs });
        const webhook = state.webhooks.get(d.webhook_id)!;
        return { ...bare(d), owner: webhook.owner, url: webhook.url, secret: webhook.secret };
      });
    },
    async settle(holder, settlements) {
      const written = new Set<string>();
      for (const { id, ...settlement } of settlements) {
        const d = state.deliveries.get(id);
        if (d === undefined || d.holder !== holder || d.status !== 'pending') continue;
        state.deliveries.set(id, { ...d, ...settlement, holder: null, lease_until: null });
        written.add(id);
      }
      return written;
    },
    async disable(webhookId) {
      const webhook = state.webhooks.get(webhookId);
      if (webhook !== undefined) state.webhooks.set(webhookId, { ...webhook, enabled: false });
    },
    deliveries: async (owner, webhookId, limit) =>
      owned(owner, webhookId) === null ? [] : [...state.deliveries.values()].filter((d) => d.webhook_id === webhookId).sort(newestFirst).slice(0, limit).map(bare),
    async retry(owner, webhookId, deliveryId) {
      const d = state.deliveries.get(deliveryId);
      if (owned(owner, webhookId) === null || d === undefined || d.webhook_id !== webhookId) return null;
      // One under a sender's claim stays that sender's: it is not tried twice at once.
      const again: MemoryDelivery = d.status === 'pending' ? { ...d, next_at: null } : { ...d, status: 'pending', next_at: null, holder: null, lease_until: null };
      state.deliveries.set(deliveryId, again);
      return bare(again);
    },
    async depth() {
      const pending = [...state.deliveries.values()].filter((d) => d.status === 'pending' && state.webhooks.get(d.webhook_id)?.enabled === true);
      const oldest = pending.reduce<string | null>((min, d) => (min === null || ms(d.created_at) < ms(min) ? d.created_at : min), null);
      return { pending: pending.length, oldest };
    },
    async prune(before) {
      for (const [key, d] of state.deliveries) if (d.status !== 'pending' && ms(d.created_at) < ms(before)) state.deliveries.delete(key);
    },
  };
}
