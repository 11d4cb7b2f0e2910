import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { uuidv7 } from 'uuidv7';
import { emptyState, type MemoryState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { WEBHOOK_BATCH, WEBHOOK_LEASE_MS, webhookSender, type TryOutcome } from '../../core/automation/webhook-sender.ts';
import { webhooksOut } from '../../core/automation/webhooks.ts';
import { pathAccess } from '../../core/reads/path-access.ts';
import type { Logger } from '../../ports/logger.ts';
import type { Storage } from '../../ports/storage.ts';
import type { WebhookOutcome, WebhookRequest } from '../../ports/webhook-post.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { manualClock, type ManualClock } from '../support/manual-clock.ts';

const alice = { id: 'alice', name: 'Alice' };
/** A logger that says nothing (these suites run in every runtime: no pino, which reads the host's name). */
const silent: Logger = { info: () => {}, warn: () => {}, error: () => {} };

describe('webhook sender (contract section 12)', () => {
  let state: MemoryState;
  let storage: Storage;
  let clock: ManualClock;
  let sent: WebhookRequest[];
  let answers: WebhookOutcome[];
  let outcomes: TryOutcome[];

  beforeEach(async () => {
    state = emptyState();
    storage = createMemoryStorage(state);
    await storage.importWorld(fixtureWorld());
    clock = manualClock(Date.now());
    sent = [];
    answers = [];
    outcomes = [];
  });

  const use = () => webhooksOut({ store: storage.webhooks, threadAccess: pathAccess(storage).thread, clock, newId: uuidv7, allowedHosts: [] });
  /** A sender whose receiver answers from `answers` in turn (200 once they run out); its jitter draw is the middle one (no jitter). */
  const sender = (holder = 'instance-1') => webhookSender({
    store: storage.webhooks, clock, log: silent, holder, random: () => 0.5,
    post: async (request) => {
      sent.push(request);
      return answers.shift() ?? { kind: 'answered', status: 200 };
    },
    canRead: async (userId, threadId) => (await storage.accounts.account(userId))?.active === true && (await storage.threads.findRow(userId, threadId)) !== null,
    observe: (outcome) => outcomes.push(outcome),
  });
  const create = async (events: Parameters<ReturnType<typeof use>['create']>[1]['events'], threadIds: string[] | null = null) => {
    const created = await use().create(alice, { url: 'https://hooks.example.com/in', events, thread_ids: threadIds });
    assert.ok(created.ok);
    return created.value;
  };

  it("signs every try as Standard Webhooks says: the spec's own library verifies it, and the body is the event", async () => {
    const { id, secret } = await create(['run_finished']);
    assert.match(secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const runId = uuidv7();
    const event = await storage.events.append(F.root, 'run_finished', { run_id: runId, stop_reason: 'end_turn' });
    await sender().tick();
    assert.equal(sent.length, 1);
    const [request] = sent;
    const verified = new StandardWebhook(secret).verify(request!.body, request!.headers as Record<string, string>);
    assert.deepEqual(verified, { type: 'run_finished', thread_id: F.root, run_id: runId, data: { run_id: runId, stop_reason: 'end_turn' }, created_at: event.at });
    assert.equal(request!.headers['content-type'], 'application/json');
    assert.equal(request!.headers['webhook-timestamp'], String(Math.floor(clock.now() / 1000)));
    assert.throws(() => new StandardWebhook(secret).verify(request!.body.replace('end_turn', 'cancelled'), request!.headers as Record<string, string>), 'a changed body fails');
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    assert.deepEqual(shown.value.deliveries.map((d) => [d.status, d.attempts, d.last_status, d.id]), [['delivered', 1, 200, request!.headers['webhook-id']]]);
    assert.deepEqual(outcomes, ['delivered']);
    assert.equal(JSON.stringify(shown.value).includes(secret), false, 'no read shows the secret');
  });

  it('retries a non-2xx, a time-out and a refused connection after about 2 s, then twice as long each time, with the same webhook-id', async () => {
    await create(['run_failed']);
    await storage.events.append(F.root, 'run_error', { run_id: uuidv7(), error: 'boom' });
    answers.push({ kind: 'answered', status: 500 }, { kind: 'timed_out' }, { kind: 'unreachable', reason: 'ECONNREFUSED' }, { kind: 'answered', status: 302 });
    const s = sender();
    await s.tick();
    assert.equal(sent.length, 1);
    await clock.advance(1_900);
    await s.tick();
    assert.equal(sent.length, 1, 'not before 2 s');
    await clock.advance(100);
    await s.tick();
    assert.equal(sent.length, 2, 'the first retry 2 s later');
    await clock.advance(3_900);
    await s.tick();
    assert.equal(sent.length, 2);
    await clock.advance(100);
    await s.tick();
    assert.equal(sent.length, 3, 'the next 4 s after');
    await clock.advance(8_000);
    await s.tick();
    assert.equal(sent.length, 4, 'then 8 s (a redirect is a failure: never followed)');
    await clock.advance(16_000);
    await s.tick();
    assert.equal(sent.length, 5);
    assert.equal(new Set(sent.map((r) => r.headers['webhook-id'])).size, 1, 'one webhook-id on every try');
    assert.equal(new Set(sent.map((r) => r.body)).size, 1, 'one body on every try');
    assert.deepEqual(outcomes, ['retrying', 'retrying', 'retrying', 'retrying', 'delivered']);
  });

  it('gives a delivery up 24 h after its event, each wait at most an hour', async () => {
    const { id } = await create(['queued']);
    await storage.events.append(F.root, 'queued', { id: uuidv7(), text: 'later' });
    const s = sender();
    const failing = { kind: 'answered', status: 503 } as const;
    let last = clock.now();
    for (let i = 0; i < 100 && !outcomes.includes('failed'); i += 1) {
      answers.push(failing);
      const before = sent.length;
      // Step to the next due time the delivery shows, see that it was at most an hour on, and that it is tried then.
      const shown = await use().show('alice', id);
      assert.ok(shown.ok);
      const next = shown.value.deliveries[0]!.next_at;
      const due = next === null ? clock.now() : Date.parse(next);
      assert.ok(due - last <= 3_600_000 + 1_000, `try ${i} came ${due - last} ms after the one before`);
      if (next !== null) {
        await clock.advance(Math.max(0, due - clock.now() - 1));
        await s.tick();
        assert.equal(sent.length, before, `try ${i} not before its due time`);
        await clock.advance(1);
      }
      await s.tick();
      assert.equal(sent.length, before + 1, `try ${i} at its due time`);
      last = clock.now();
    }
    assert.equal(outcomes.at(-1), 'failed');
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    const [delivery] = shown.value.deliveries;
    assert.equal(delivery!.status, 'failed');
    assert.ok(clock.now() - Date.parse(delivery!.created_at) <= 24 * 3_600_000 + 2_000);
    assert.ok(clock.now() - Date.parse(delivery!.created_at) > 23 * 3_600_000);
  });

  it('a 410 turns the webhook off: nothing more is sent or enqueued', async () => {
    const { id } = await create(['run_finished']);
    await storage.events.append(F.root, 'run_finished', { run_id: uuidv7() });
    answers.push({ kind: 'answered', status: 410 });
    const s = sender();
    await s.tick();
    assert.deepEqual(outcomes, ['disabled']);
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    assert.equal(shown.value.enabled, false);
    assert.equal(shown.value.deliveries[0]!.status, 'failed');
    await storage.events.append(F.root, 'run_finished', { run_id: uuidv7() });
    await clock.advance(60_000);
    await s.tick();
    assert.equal(sent.length, 1);
    assert.deepEqual(await use().retry('alice', id, shown.value.deliveries[0]!.id), { ok: false, error: { code: 'webhook_disabled' } });
  });

  it('checks access when it sends: a member removed since the event gets nothing, and the delivery is dropped', async () => {
    const { id } = await create(['run_finished'], [F.shared]);
    await storage.events.append(F.shared, 'run_finished', { run_id: uuidv7() });
    state.members.get(F.shared)!.delete('alice');
    await sender().tick();
    assert.equal(sent.length, 0);
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    assert.equal(shown.value.deliveries[0]!.status, 'dropped');
    assert.deepEqual(outcomes, ['dropped']);
  });

  it("a deactivated owner's deliveries are dropped unsent", async () => {
    const { id } = await create(['run_finished']);
    await storage.events.append(F.root, 'run_finished', { run_id: uuidv7() });
    state.users.set('alice', { ...state.users.get('alice')!, active: false });
    await sender().tick();
    assert.equal(sent.length, 0);
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    assert.equal(shown.value.deliveries[0]!.status, 'dropped');
  });

  it('a backlog larger than a batch is sent look after look at once, not a batch a tick', async () => {
    await create(['run_finished']);
    const backlog = WEBHOOK_BATCH * 3 + 1;
    for (let i = 0; i < backlog; i++) await storage.events.append(F.root, 'run_finished', { run_id: uuidv7(), stop_reason: 'end_turn' });
    const s = sender();
    s.start();
    try {
      // No tick of the clock passes: the look at start and the ones it asks for right after it send every one
      // (signing is asynchronous, on the host's thread pool: waited for in real time, at most 20 s).
      for (const started = Date.now(); sent.length < backlog && Date.now() - started < 20_000;) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(sent.length, backlog);
    } finally {
      await s.stop();
    }
    assert.equal(new Set(sent.map((r) => r.headers['webhook-id'])).size, backlog, 'each once');
  });

  it('two instances looking at once send each delivery once', async () => {
    await create(['queued']);
    for (let i = 0; i < 10; i += 1) await storage.events.append(F.root, 'queued', { id: uuidv7(), text: `n${i}` });
    await Promise.all([sender('one').tick(), sender('two').tick(), sender('three').tick()]);
    assert.equal(sent.length, 10);
    assert.equal(new Set(sent.map((r) => r.headers['webhook-id'])).size, 10);
  });

  it('a manual retry sends a delivery again at once, with the same webhook-id', async () => {
    const { id } = await create(['run_finished']);
    await storage.events.append(F.root, 'run_finished', { run_id: uuidv7() });
    const s = sender();
    await s.tick();
    const shown = await use().show('alice', id);
    assert.ok(shown.ok);
    const again = await use().retry('alice', id, shown.value.deliveries[0]!.id);
    assert.ok(again.ok);
    assert.equal(again.value.status, 'pending');
    await s.tick();
    assert.equal(sent.length, 2);
    assert.equal(sent[0]!.headers['webhook-id'], sent[1]!.headers['webhook-id']);
    assert.deepEqual(await use().retry('bob', id, shown.value.deliveries[0]!.id), { ok: false, error: { code: 'webhook_not_found' } });
  });

  it('a delivery whose sender died mid-try is sent by another once the lease lapses, with the same webhook-id; not before', async () => {
    await create(['run_finished']);
    await storage.events.append(F.root, 'run_finished', { run_id: uuidv7() });
    const stuck: WebhookRequest[] = [];
    // The first instance's try never ends: it died with the connection open.
    const dead = webhookSender({
      store: storage.webhooks, clock, log: silent, holder: 'dead', random: () => 0.5,
      post: (request) => {
        stuck.push(request);
        return new Promise(() => {});
      },
      canRead: async () => true,
    });
    void dead.tick();
    await waitUntil(() => stuck.length === 1);
    const s = sender('alive');
    await clock.advance(WEBHOOK_LEASE_MS - 1_000);
    await s.tick();
    assert.equal(sent.length, 0, 'not while its lease runs');
    await clock.advance(1_000);
    await s.tick();
    assert.equal(sent.length, 1);
    assert.equal(sent[0]!.headers['webhook-id'], stuck[0]!.headers['webhook-id']);
    assert.equal(sent[0]!.body, stuck[0]!.body);
  });
});

/** Lets the event loop run until `condition` holds (work set off without a clock). */
async function waitUntil(condition: () => boolean): Promise<void> {
  // Signing is asynchronous on the host's thread pool: a busy machine takes real time, bounded at 10 s.
  for (const started = Date.now(); !condition() && Date.now() - started < 10_000;) await new Promise((resolve) => setTimeout(resolve, 5));
  assert.ok(condition());
}
