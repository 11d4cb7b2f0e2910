import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { Storage } from '../../ports/storage.ts';
import type { DeliverySettlement, StoredWebhook, WebhookStore } from '../../ports/webhook-store.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';

/** Settles one delivery: whether it was written. */
const settleOne = async (store: WebhookStore, id: string, holder: string, settlement: DeliverySettlement): Promise<boolean> =>
  (await store.settle(holder, [{ id, ...settlement }])).has(id);

/** One backend for the suite: a storage, and another over the same data (a second instance, or a restart). */
export interface WebhookBackend {
  readonly storage: Storage;
  readonly reopen: () => Promise<Storage>;
  readonly close: () => Promise<void>;
}

const LEASE = 60_000;
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

/**
 * The WebhookStore contract (contract section 12, "Webhooks"): webhooks kept by their owner, never answered
 * with their secret but to a sender's claim; the events the log stores put in the outbox in the same write,
 * for the webhooks they match (type, threads, the owner's access then); a delivery claimed by one holder at a
 * time, settled only by it, claimed again by another once its lease lapses, and seen by every instance.
 */
export function webhookStoreContract(name: string, open: () => Promise<WebhookBackend>): void {
  describe(`webhook store contract: ${name}`, () => {
    let backend: WebhookBackend;
    let other: Storage;
    before(async () => {
      backend = await open();
      await backend.storage.importWorld(fixtureWorld());
      other = await backend.reopen();
    });
    after(() => backend.close());
    const store = (): WebhookStore => backend.storage.webhooks;
    const webhook = (owner: string, fields: Partial<StoredWebhook> = {}): StoredWebhook => ({
      id: uuidv7(), owner, url: 'https://hooks.example.com/in', events: ['run_finished', 'run_failed'], thread_ids: null, enabled: true,
      created_at: new Date().toISOString(), secret: SECRET, ...fields,
    });
    const now = () => new Date().toISOString();
    const later = (ms: number) => new Date(Date.now() + ms).toISOString();
    /** Claims everything due for a holder of its own, now, and settles nothing: the ids claimed. */
    const drain = async (holder = `drain-${uuidv7()}`) => {
      const ids: string[] = [];
      for (let batch = await store().claim(holder, later(10 * LEASE), LEASE, 100); batch.length > 0; batch = await store().claim(holder, later(10 * LEASE), LEASE, 100)) {
        for (const d of batch) {
          ids.push(d.id);
          await settleOne(store(), d.id, holder, { status: 'delivered', attempts: 1, next_at: null, last_status: 200, last_error: null });
        }
      }
      return ids;
    };

    it('a webhook is stored, listed by its owner newest first without its secret, found and removed by its owner only', async () => {
      const owner = `user-${uuidv7()}`;
      const first = webhook(owner, { thread_ids: [F.root], events: ['queued'] });
      const second = webhook(owner);
      assert.equal(await store().create(first, 2), true);
      assert.equal(await store().create(second, 2), true);
      assert.equal(await store().create(webhook(owner), 2), false, 'past the limit nothing is stored');
      const listed = await other.webhooks.list(owner);
      assert.deepEqual(listed.map((w) => w.id), [second.id, first.id]);
      const { secret: _, ...shown } = first;
      assert.deepEqual(listed[1], shown);
      assert.equal(JSON.stringify(listed).includes(SECRET), false, 'no secret in a listing');
      assert.deepEqual(await store().find(owner, first.id), shown);
      assert.equal(await store().find('someone-else', first.id), null);
      assert.equal(await store().remove('someone-else', first.id), false);
      assert.equal(await store().remove(owner, first.id), true);
      assert.equal(await store().find(owner, first.id), null);
      assert.equal(await store().remove(owner, second.id), true);
      assert.equal(await store().find(owner, 'not-a-uuid'), null);
    });

    it("an event stored in the log is put in the outbox, in the same write, for each webhook it matches: type, thread, the owner's access", async () => {
      await drain();
      const all = webhook('alice', { events: ['run_finished', 'run_failed', 'queued', 'approval_requested'] });
      const onlyRoot = webhook('alice', { thread_ids: [F.root], events: ['run_finished'] });
      const bobs = webhook('bob', { events: ['run_finished'] });
      const off = webhook('alice', { enabled: false });
      for (const w of [all, onlyRoot, bobs, off]) assert.equal(await store().create(w, 50), true);
      const runId = uuidv7();
      const stored = await backend.storage.events.append(F.root, 'run_finished', { run_id: runId, stop_reason: 'end_turn' });
      await backend.storage.events.append(F.root, 'message', { run_id: runId, message: { role: 'assistant', text: 'hi' } });
      await backend.storage.events.append(F.bobThread, 'run_finished', { run_id: uuidv7() });
      await backend.storage.events.append(F.shared, 'run_error', { run_id: runId, code: 'agent_failed', error: 'boom' });
      await backend.storage.events.append(F.root, 'approval_requested', { run_id: runId, pending: { id: uuidv7(), run_id: runId } });
      await backend.storage.events.append(F.root, 'queued', { id: uuidv7(), text: 'next' });

      const ofAll = await other.webhooks.deliveries('alice', all.id, 50);
      assert.deepEqual(ofAll.map((d) => [d.type, d.thread_id, d.run_id]).sort(), [
        ['approval_requested', F.root, runId], ['queued', F.root, null], ['run_failed', F.shared, runId], ['run_finished', F.root, runId],
      ].sort(), "alice hears of her thread and the one she is a member of, never bob's own");
      const finished = ofAll.find((d) => d.type === 'run_finished')!;
      assert.deepEqual(finished.data, { run_id: runId, stop_reason: 'end_turn' });
      assert.equal(Date.parse(finished.created_at), Date.parse(stored.at), "the event's time");
      assert.deepEqual([finished.status, finished.attempts, finished.next_at, finished.last_status, finished.last_error], ['pending', 0, null, null, null]);
      assert.deepEqual((await store().deliveries('alice', onlyRoot.id, 50)).map((d) => d.type), ['run_finished']);
      assert.deepEqual((await store().deliveries('bob', bobs.id, 50)).map((d) => d.thread_id), [F.bobThread]);
      assert.deepEqual(await store().deliveries('alice', off.id, 50), [], 'a disabled webhook hears nothing');
      assert.deepEqual(await store().deliveries('bob', all.id, 50), [], "another's webhook's deliveries are not shown");
      for (const w of [all, onlyRoot, bobs, off]) await store().remove(w.owner, w.id);
    });

    it('enqueue puts an event that is not in the log (merged) in the outbox as an append does, and answers how many', async () => {
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      const at = now();
      assert.equal(await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { commit: 'abc', base: 'main' }, created_at: at }), 1);
      assert.equal(await store().enqueue({ type: 'merged', thread_id: F.bobThread, run_id: null, data: {}, created_at: at }), 0);
      const [d] = await store().deliveries('alice', w.id, 10);
      assert.deepEqual([d!.type, d!.thread_id, d!.data, Date.parse(d!.created_at)], ['merged', F.root, { commit: 'abc', base: 'main' }, Date.parse(at)]);
      await store().remove('alice', w.id);
    });

    it('a delivery is claimed by one holder with what sending needs; another gets it only once the lease lapsed; only its holder settles it', async () => {
      await drain();
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: {}, created_at: now() });
      const [claimed, ...rest] = await store().claim('one', now(), LEASE, 10);
      assert.equal(rest.length, 0);
      assert.deepEqual([claimed!.owner, claimed!.url, claimed!.secret, claimed!.webhook_id], ['alice', w.url, SECRET, w.id]);
      assert.deepEqual(await other.webhooks.claim('two', now(), LEASE, 10), [], 'not while the lease runs');
      const [again] = await other.webhooks.claim('two', later(LEASE + 1_000), LEASE, 10);
      assert.equal(again?.id, claimed!.id, 'the same delivery (the same webhook-id) once the lease lapsed');
      assert.equal(await settleOne(store(), claimed!.id, 'one', { status: 'delivered', attempts: 1, next_at: null, last_status: 200, last_error: null }), false, 'the first holder no longer holds it');
      const retryAt = later(2_000);
      assert.equal(await settleOne(other.webhooks, claimed!.id, 'two', { status: 'pending', attempts: 1, next_at: retryAt, last_status: 500, last_error: 'answered 500' }), true);
      assert.deepEqual(await store().claim('three', now(), LEASE, 10), [], 'not due before next_at');
      const [third] = await store().claim('three', later(3_000), LEASE, 10);
      assert.deepEqual([third!.id, third!.attempts, third!.last_status, Date.parse(third!.next_at!)], [claimed!.id, 1, 500, Date.parse(retryAt)]);
      assert.equal(await settleOne(store(), third!.id, 'three', { status: 'failed', attempts: 2, next_at: null, last_status: 410, last_error: 'gone' }), true);
      assert.equal(await settleOne(store(), third!.id, 'three', { status: 'delivered', attempts: 3, next_at: null, last_status: 200, last_error: null }), false, 'settled once');
      const [shown] = await store().deliveries('alice', w.id, 10);
      assert.deepEqual([shown!.status, shown!.attempts, shown!.last_status, shown!.last_error], ['failed', 2, 410, 'gone']);
      await store().remove('alice', w.id);
    });

    it("a look's settlements are written together: each one its holder holds, none of another's", async () => {
      await drain();
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      for (let i = 0; i < 3; i++) await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { i }, created_at: now() });
      const mine = await store().claim('mine', now(), LEASE, 2);
      const [theirs] = await other.webhooks.claim('theirs', now(), LEASE, 10);
      assert.equal(mine.length, 2);
      const settled = (id: string, status: 'delivered' | 'pending', at: string | null) => ({ id, status, attempts: 1, next_at: at, last_status: status === 'delivered' ? 200 : 503, last_error: status === 'delivered' ? null : 'answered 503' });
      const retryAt = later(2_000);
      const written = await store().settle('mine', [settled(mine[0]!.id, 'delivered', null), settled(mine[1]!.id, 'pending', retryAt), settled(theirs!.id, 'delivered', null)]);
      assert.deepEqual([...written].sort(), [mine[0]!.id, mine[1]!.id].sort(), 'not the delivery another holds');
      const shown = new Map((await store().deliveries('alice', w.id, 10)).map((d) => [d.id, d]));
      assert.deepEqual([shown.get(mine[0]!.id)!.status, shown.get(mine[1]!.id)!.status, shown.get(theirs!.id)!.status], ['delivered', 'pending', 'pending']);
      assert.equal(Date.parse(shown.get(mine[1]!.id)!.next_at!), Date.parse(retryAt));
      assert.equal(shown.get(mine[1]!.id)!.last_error, 'answered 503');
      assert.equal((await store().settle('mine', [])).size, 0);
      await store().remove('alice', w.id);
    });

    it('two instances claiming at once never claim one delivery both', async () => {
      await drain();
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      for (let i = 0; i < 12; i += 1) await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { i }, created_at: now() });
      const claims = await Promise.all([0, 1, 2, 3].map((i) => (i % 2 === 0 ? store() : other.webhooks).claim(`racer-${i}`, now(), LEASE, 4)));
      const ids = claims.flat().map((d) => d.id);
      assert.equal(new Set(ids).size, ids.length, 'no delivery claimed twice');
      assert.equal(ids.length, 12);
      await store().remove('alice', w.id);
    });

    it('a disabled webhook is claimed no more; the depth counts pending deliveries of enabled webhooks; a retry makes one pending again', async () => {
      await drain();
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { n: 1 }, created_at: now() });
      await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { n: 2 }, created_at: now() });
      const depth = await other.webhooks.depth();
      assert.equal(depth.pending, 2);
      assert.ok(depth.oldest !== null && Date.now() - Date.parse(depth.oldest) < 60_000);
      const [one] = await store().claim('h', now(), LEASE, 1);
      await settleOne(store(), one!.id, 'h', { status: 'failed', attempts: 1, next_at: null, last_status: 410, last_error: 'gone' });
      await store().disable(w.id);
      assert.equal((await store().find('alice', w.id))?.enabled, false);
      assert.deepEqual(await store().claim('h', later(LEASE * 10), LEASE, 10), []);
      assert.deepEqual(await store().depth(), { pending: 0, oldest: null });
      assert.equal(await store().retry('bob', w.id, one!.id), null, "not another's");
      assert.equal(await store().retry('alice', w.id, uuidv7()), null);
      const again = await store().retry('alice', w.id, one!.id);
      assert.deepEqual([again?.id, again?.status, again?.next_at, again?.attempts], [one!.id, 'pending', null, 1]);
      await store().remove('alice', w.id);
    });

    it('settled deliveries older than the horizon are pruned, pending ones kept; a removed webhook takes its deliveries with it', async () => {
      await drain();
      const w = webhook('alice', { events: ['merged'] });
      await store().create(w, 50);
      const old = new Date(Date.now() - 8 * 86_400_000).toISOString();
      await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { n: 'old' }, created_at: old });
      await store().enqueue({ type: 'merged', thread_id: F.root, run_id: null, data: { n: 'pending' }, created_at: old });
      const [first] = await store().claim('h', now(), LEASE, 1);
      await settleOne(store(), first!.id, 'h', { status: 'delivered', attempts: 1, next_at: null, last_status: 204, last_error: null });
      await store().prune(new Date(Date.now() - 7 * 86_400_000).toISOString());
      const left = await store().deliveries('alice', w.id, 10);
      assert.deepEqual(left.map((d) => d.status), ['pending']);
      assert.equal(await store().remove('alice', w.id), true);
      assert.deepEqual(await store().claim('h', later(LEASE * 10), LEASE, 10), []);
    });

    it("a member removed from a thread since is no longer enqueued for its events", async () => {
      await drain();
      const w = webhook('alice', { events: ['run_finished'], thread_ids: [F.shared] });
      await store().create(w, 50);
      await backend.storage.events.append(F.shared, 'run_finished', { run_id: uuidv7() });
      const world = fixtureWorld();
      await backend.storage.importWorld({ ...world, threads: world.threads.map((t) => (t.id === F.shared ? { ...t, members: [] } : t)) });
      await backend.storage.events.append(F.shared, 'run_finished', { run_id: uuidv7() });
      assert.equal((await store().deliveries('alice', w.id, 10)).length, 1);
      await backend.storage.importWorld(world);
      await store().remove('alice', w.id);
    });
  });
}
