// Issue 42, over HTTP: a directive a schedule or a hook sends says so on its ledger message (`origin`), read back
// through GET messages (and GET queue while it waits, the message keeping it when it runs); a person's directive
// has none, and a directive's body cannot claim one (the field is ignored, as every field DirectiveBody does not
// name: only the server's own senders set it).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { idleThread } from '../support/http.ts';
import { manualClock } from '../support/manual-clock.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
/** Thirty seconds before a whole minute. */
const START = Date.UTC(2026, 5, 1, 0, 0, 30);

interface LedgerRow {
  readonly id: string;
  readonly role: string;
  readonly text: string;
  readonly origin: { readonly kind: string; readonly id: string } | null;
}

describe('directive origin', () => {
  let service: TestService;
  const clock = manualClock(START);
  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage, clock });
  });
  after(() => service.close());

  const post = (path: string, body: unknown) => service.ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) });
  const ledger = async (threadId: string): Promise<LedgerRow[]> =>
    (await service.ask({ path: `/api/console/threads/${threadId}/messages?limit=200`, headers: ALICE })).json().items;
  /**
   * Moves the clock to `due`, then on a second at a time until each schedule's due time is claimed (its next due
   * time moved on): a look at the due time itself may still be busy with the one before.
   */
  const fireAt = async (due: number, ids: readonly string[]) => {
    await clock.advance(due - clock.now());
    await waitFor(async () => {
      const listed = (await service.ask({ path: '/api/console/schedules', headers: ALICE })).json() as { id: string; next_run_at: string }[];
      if (ids.every((id) => Date.parse(listed.find((s) => s.id === id)!.next_run_at) > due)) return true;
      await clock.advance(1_000);
      return false;
    }, { everyMs: 50, what: 'the due time claimed' });
  };
  const userMessage = async (threadId: string, text: string): Promise<LedgerRow | undefined> =>
    (await ledger(threadId)).find((m) => m.role === 'user' && m.text === text);

  it("a console directive's origin is null, and one its body claims is ignored", async () => {
    const sent = await post(`/api/console/threads/${randomUUID()}/directives`, { text: 'Typed by hand' });
    assert.equal(sent.status, 202, sent.text);
    const threadId = sent.json().thread_id as string;
    await idleThread(service.port, threadId, ALICE);
    assert.equal((await userMessage(threadId, 'Typed by hand'))?.origin, null);
    const hook = (await post('/api/console/hooks', {})).json() as { id: string };
    const forged = await post(`/api/console/threads/${threadId}/directives`, { text: 'Pretending', origin: { kind: 'hook', id: hook.id } });
    assert.equal(forged.status, 202, forged.text);
    await idleThread(service.port, threadId, ALICE);
    const message = await userMessage(threadId, 'Pretending');
    assert.ok(message !== undefined);
    assert.equal(message.origin, null, 'a client cannot say where its directive came from');
  });

  it("a hook's call is stored with the hook as its origin, to a new thread and to a thread", async () => {
    const hook = (await post('/api/console/hooks', { project: 'acme-web' })).json() as { id: string; secret: string };
    const call = (text: string, id = hook.id, secret = hook.secret) =>
      service.ask({ method: 'POST', path: `/api/hooks/${id}`, headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, body: JSON.stringify({ text }) });
    const called = await call('Build failed');
    assert.equal(called.status, 202, called.text);
    const threadId = called.json().thread_id as string;
    await idleThread(service.port, threadId, ALICE);
    assert.deepEqual((await userMessage(threadId, 'Build failed'))?.origin, { kind: 'hook', id: hook.id });
    const toThread = (await post('/api/console/hooks', { thread_id: threadId })).json() as { id: string; secret: string };
    assert.equal((await call('Build fixed', toThread.id, toThread.secret)).status, 202);
    await idleThread(service.port, threadId, ALICE);
    assert.deepEqual((await userMessage(threadId, 'Build fixed'))?.origin, { kind: 'hook', id: toThread.id });
  });

  it("a schedule's fire is stored with the schedule as its origin, to a new thread and to a thread", async () => {
    const started = await post(`/api/console/threads/${randomUUID()}/directives`, { text: 'A thread to schedule into' });
    const threadId = started.json().thread_id as string;
    await idleThread(service.port, threadId, ALICE);
    const toThread = (await post('/api/console/schedules', { cron: '* * * * *', text: 'Nightly report', thread_id: threadId })).json() as { id: string; next_run_at: string };
    const toNew = (await post('/api/console/schedules', { cron: '* * * * *', text: 'Fresh look', project: 'infra' })).json() as { id: string };
    await fireAt(Date.parse(toThread.next_run_at), [toThread.id, toNew.id]);
    await waitFor(async () => (await userMessage(threadId, 'Nightly report')) !== undefined, { what: "the schedule's directive in its thread" });
    await idleThread(service.port, threadId, ALICE);
    assert.deepEqual((await userMessage(threadId, 'Nightly report'))?.origin, { kind: 'schedule', id: toThread.id });
    const threads = async () => ((await service.ask({ path: '/api/console/threads?limit=200', headers: ALICE })).json().items as { id: string; title: string }[]);
    await waitFor(async () => (await threads()).some((t) => t.title === 'Fresh look'), { what: "the schedule's new thread" });
    const fresh = (await threads()).find((t) => t.title === 'Fresh look')!;
    await idleThread(service.port, fresh.id, ALICE);
    assert.deepEqual((await userMessage(fresh.id, 'Fresh look'))?.origin, { kind: 'schedule', id: toNew.id });
    for (const id of [toThread.id, toNew.id]) assert.equal((await service.ask({ method: 'DELETE', path: `/api/console/schedules/${id}`, headers: ALICE })).status, 204);
  });

  it("a schedule's fire to a busy thread is queued with its origin, and its message keeps it when it runs", async () => {
    // The demo agent holds a turn whose text says `[wait]` until it is cancelled: the fire queues behind it.
    const held = await post(`/api/console/threads/${randomUUID()}/directives`, { text: 'hold [wait]', model: 'claude:opus' });
    assert.equal(held.status, 202, held.text);
    const threadId = held.json().thread_id as string;
    const made = (await post('/api/console/schedules', { cron: '* * * * *', text: 'While you work', thread_id: threadId })).json() as { id: string; next_run_at: string };
    await fireAt(Date.parse(made.next_run_at), [made.id]);
    type Item = { message_id: string; text: string; origin: unknown };
    const queue = async (): Promise<Item[]> => (await service.ask({ path: `/api/console/threads/${threadId}/queue`, headers: ALICE })).json();
    await waitFor(async () => (await queue()).some((item) => item.text === 'While you work'), { what: "the schedule's queued directive" });
    assert.equal((await service.ask({ method: 'DELETE', path: `/api/console/schedules/${made.id}`, headers: ALICE })).status, 204);
    const item = (await queue()).find((queued) => queued.text === 'While you work')!;
    const origin = { kind: 'schedule', id: made.id };
    assert.deepEqual(item.origin, origin);
    assert.deepEqual((await ledger(threadId)).find((m) => m.id === item.message_id)?.origin, origin);
    assert.equal((await service.ask({ method: 'POST', path: `/api/console/threads/${threadId}/cancel`, headers: ALICE })).status, 202);
    await waitFor(async () => (await queue()).length === 0, { what: 'the queued directive to start' });
    await idleThread(service.port, threadId, ALICE);
    const conversation = (await service.ask({ path: `/api/console/threads/${threadId}/conversations`, headers: ALICE })).json()[0] as { id: string };
    const runs = (await service.ask({ path: `/api/console/threads/${threadId}/conversations/${conversation.id}/runs`, headers: ALICE })).json().items as unknown[];
    assert.equal(runs.length, 2, 'it ran, in a turn of its own');
    assert.deepEqual((await ledger(threadId)).find((m) => m.id === item.message_id)?.origin, origin, 'its message keeps its origin');
  });
});
