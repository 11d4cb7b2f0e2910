// CONTRACT section 12, "Schedules", over HTTP: schedules created, listed, changed and removed by their owner;
// a bad cron expression or time zone is 422; each due time sends one directive as the owner (the clock is moved
// by hand: the service's scheduler ticks on it).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { idleThread, type Answer } from '../support/http.ts';
import { FIRE_LEASE_MS } from '../../core/automation/scheduler.ts';
import { manualClock } from '../support/manual-clock.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const S = '/api/console/schedules';
const TOKEN = 'metrics-token-0123456789';
/** A Monday, 00:00:30 UTC: thirty seconds before a whole minute. */
const START = Date.UTC(2026, 5, 1, 0, 0, 30);

const problemOf = (res: Answer, status: number, code: string, path?: string) => {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/problem+json', res.text);
  assert.equal(res.json().code, code, res.text);
  if (path !== undefined) assert.deepEqual(res.json().errors.map((e: { path: string }) => e.path), [path], res.text);
};

describe('schedules', () => {
  let service: TestService;
  const clock = manualClock(START);
  /** The size of each batch of openings written together, and which opening of the next batch the storage leaves out. */
  const batches: number[] = [];
  let leaveOut: string | null = null;
  let dropDone = false;
  let failWrite = false;
  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    // As an instance that died after opening a look's threads, before marking its fires done, would leave them.
    const done = storage.schedules.done;
    (storage.schedules as { done: typeof done }).done = async (fires) => {
      if (dropDone) throw new Error('the instance stopped');
      return done(fires);
    };
    const openThreads = storage.writer.openThreads;
    // As a storage that found one key taken (by a race) would: nothing written for it, the rest opened.
    (storage.writer as { openThreads: typeof openThreads }).openThreads = async (openings) => {
      batches.push(openings.length);
      if (failWrite) throw new Error('the statement timed out');
      const left = openings.findIndex((o) => o.text === leaveOut);
      if (left === -1) return openThreads(openings);
      const opened = await openThreads(openings.filter((_, i) => i !== left));
      opened.splice(left, 0, null);
      return opened;
    };
    service = await startService({ DIRECTIVES_PER_MINUTE: '100000', METRICS_TOKEN: TOKEN }, { storage, clock });
  });
  after(() => service.close());

  const send = (method: string, path: string, body: unknown, headers: Record<string, string> = ALICE) =>
    service.ask({ method, path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  /** Alice's threads in a project, by id. */
  const threadsIn = async (project: string): Promise<{ id: string; title: string }[]> =>
    ((await service.ask({ path: '/api/console/threads?limit=200', headers: ALICE })).json().items as { id: string; project: string | null; title: string }[])
      .filter((t) => t.project === project);

  it('a schedule is created with its next due time in its zone (UTC by default), listed, changed and removed by its owner only', async () => {
    const berlin = await send('POST', S, { cron: '0 9 * * 1-5', timezone: 'Europe/Berlin', text: 'Standup notes', project: 'acme-web' });
    assert.equal(berlin.status, 201, berlin.text);
    const created = berlin.json();
    assert.equal(created.next_run_at, '2026-06-01T07:00:00.000Z', '09:00 in Berlin (summer time) is 07:00 UTC');
    assert.deepEqual([created.enabled, created.thread_id, created.project, created.model], [true, null, 'acme-web', null]);
    const utc = (await send('POST', S, { cron: '30 0 12 * * *', text: 'Seconds first' })).json();
    assert.equal(utc.timezone, 'UTC');
    assert.equal(utc.next_run_at, '2026-06-01T12:00:30.000Z', 'six fields: seconds first');
    const listed = (await service.ask({ path: S, headers: ALICE })).json() as { id: string }[];
    assert.deepEqual(listed.slice(0, 2).map((s) => s.id), [utc.id, created.id], 'newest first');
    assert.ok(!((await service.ask({ path: S, headers: BOB })).json() as { id: string }[]).some((s) => s.id === created.id));
    problemOf(await send('PATCH', `${S}/${created.id}`, { text: 'x' }, BOB), 404, 'schedule_not_found');
    // Someone else's schedule is unknown whatever the body: a bad one is 404, not 422; the owner's bad one is 422.
    problemOf(await send('PATCH', `${S}/${created.id}`, {}, BOB), 404, 'schedule_not_found');
    problemOf(await send('PATCH', `${S}/${created.id}`, {}), 422, 'validation_failed');
    const moved = await send('PATCH', `${S}/${created.id}`, { timezone: 'America/New_York' });
    assert.equal(moved.status, 200, moved.text);
    assert.equal(moved.json().next_run_at, '2026-06-01T13:00:00.000Z', 'the next due time read again in the new zone');
    problemOf(await send('DELETE', `${S}/${created.id}`, '', BOB), 404, 'schedule_not_found');
    assert.equal((await send('DELETE', `${S}/${created.id}`, '')).status, 204);
    assert.equal((await send('DELETE', `${S}/${utc.id}`, '')).status, 204);
    problemOf(await send('DELETE', `${S}/${created.id}`, ''), 404, 'schedule_not_found');
  });

  it('a bad cron expression or time zone is 422 at its field; so is a bad text, a project with a thread, or an empty change', async () => {
    for (const cron of ['61 * * * *', '* * * *', '0 0 0 * * * 2027', '@daily', 'every minute']) {
      problemOf(await send('POST', S, { cron, text: 'x' }), 422, 'validation_failed', 'body.cron');
    }
    for (const timezone of ['Mars/Olympus', 'Europe/Berlin/', '+01:00', '']) {
      problemOf(await send('POST', S, { cron: '* * * * *', timezone, text: 'x' }), 422, 'validation_failed', 'body.timezone');
    }
    problemOf(await send('POST', S, { cron: '* * * * *', text: '  ' }), 422, 'validation_failed', 'body.text');
    problemOf(await send('POST', S, { cron: '* * * * *' }), 422, 'validation_failed', 'body.text');
    problemOf(await send('POST', S, { cron: '* * * * *', text: 'x', project: 'nowhere' }), 422, 'validation_failed', 'body.project');
    problemOf(await send('POST', S, { cron: '* * * * *', text: 'x', thread_id: '01a220de-6f70-7c0d-bf57-8943745e0e72', model: 'claude:sonnet' }), 422, 'validation_failed', 'body.project');
    problemOf(await send('POST', S, '{"cron":'), 400, 'malformed_json');
    const made = (await send('POST', S, { cron: '0 0 1 1 *', text: 'New year' })).json();
    problemOf(await send('PATCH', `${S}/${made.id}`, {}), 422, 'validation_failed');
    problemOf(await send('PATCH', `${S}/${made.id}`, { cron: '0 25 * * *' }), 422, 'validation_failed', 'body.cron');
    problemOf(await send('PATCH', `${S}/${made.id}`, { timezone: 'Nowhere/Else' }), 422, 'validation_failed', 'body.timezone');
    assert.equal((await send('DELETE', `${S}/${made.id}`, '')).status, 204);
  });

  it('each due time sends one directive as the owner, to a new thread with the schedule\'s project; a disabled schedule sends none', async () => {
    const made = await send('POST', S, { cron: '* * * * *', text: 'Scheduled check', project: 'infra' });
    assert.equal(made.status, 201, made.text);
    const schedule = made.json();
    const due = Date.parse(schedule.next_run_at);
    assert.equal(await threadsIn('infra').then((t) => t.filter((x) => x.title === 'Scheduled check').length), 0);
    await clock.advance(due - clock.now());
    await waitFor(async () => (await threadsIn('infra')).some((t) => t.title === 'Scheduled check'), { what: 'the first due time\'s thread' });
    const [first] = (await threadsIn('infra')).filter((t) => t.title === 'Scheduled check');
    await idleThread(service.port, first!.id, ALICE);
    const listed = ((await service.ask({ path: S, headers: ALICE })).json() as { id: string; next_run_at: string }[]).find((s) => s.id === schedule.id)!;
    assert.equal(Date.parse(listed.next_run_at), due + 60_000, 'moved on to the next minute');
    // Disabled: its next due time passes without a directive; enabled again, it is due from now on (nothing missed is sent).
    assert.equal((await send('PATCH', `${S}/${schedule.id}`, { enabled: false })).status, 200);
    await clock.advance(120_000);
    assert.equal((await threadsIn('infra')).filter((t) => t.title === 'Scheduled check').length, 1, 'none while disabled');
    const enabled = (await send('PATCH', `${S}/${schedule.id}`, { enabled: true, text: 'Scheduled again' })).json();
    assert.ok(Date.parse(enabled.next_run_at) > clock.now());
    await clock.advance(Date.parse(enabled.next_run_at) - clock.now());
    await waitFor(async () => (await threadsIn('infra')).some((t) => t.title === 'Scheduled again'), { what: 'the due time after enabling' });
    const again = (await threadsIn('infra')).find((t) => t.title === 'Scheduled again')!;
    await idleThread(service.port, again.id, ALICE);
    assert.equal((await threadsIn('infra')).filter((t) => t.title.startsWith('Scheduled')).length, 2, 'one thread per due time');
    assert.equal((await send('DELETE', `${S}/${schedule.id}`, '')).status, 204);
    // The schedule lag (due time to directive stored) of each fire sent: the clock stood at the due time.
    const metrics = (await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).text;
    const value = (name: string) => Number(metrics.split('\n').find((line) => line.startsWith(`${name} `))?.split(' ')[1]);
    assert.equal(value('console_schedule_lag_seconds_count'), 2, metrics);
    assert.ok(value('console_schedule_lag_seconds_sum') < 2, 'each sent within the tick it fell due in');
  });

  it("a look's fires to new threads are opened together; a fire to a thread, a route not offered, or a key the write left out go one by one", async () => {
    const opened = await send('POST', `/api/console/threads/${randomUUID()}/directives`, { text: 'A thread to schedule into', project: 'acme-web' });
    assert.equal(opened.status, 202, opened.text);
    const target = opened.json().thread_id as string;
    await idleThread(service.port, target, ALICE);
    const made = await Promise.all([
      send('POST', S, { cron: '* * * * *', text: 'Together one', project: 'infra' }),
      send('POST', S, { cron: '* * * * *', text: 'Together two', project: 'acme-web', model: 'claude:sonnet' }),
      send('POST', S, { cron: '* * * * *', text: 'Left out, then sent alone', project: 'infra' }),
      send('POST', S, { cron: '* * * * *', text: 'Into the thread', thread_id: target }),
      send('POST', S, { cron: '* * * * *', text: 'No such route', project: 'infra', model: 'nobody:none' }),
    ]);
    for (const res of made) assert.equal(res.status, 201, res.text);
    batches.length = 0;
    leaveOut = 'Left out, then sent alone';
    await clock.advance(Date.parse(made[0]!.json().next_run_at) - clock.now());
    const titles = async () => [...(await threadsIn('infra')), ...(await threadsIn('acme-web'))].map((t) => t.title);
    await waitFor(async () => (await titles()).includes('Left out, then sent alone'), { what: 'the fire left out, sent alone' });
    assert.deepEqual(batches, [3], 'the three plain fires in one write (the one left out, then sent alone, not again)');
    for (const title of ['Together one', 'Together two']) assert.equal((await titles()).filter((t) => t === title).length, 1, title);
    const two = (await threadsIn('acme-web')).find((t) => t.title === 'Together two')!;
    const conversation = (await service.ask({ path: `/api/console/threads/${two.id}/conversations`, headers: ALICE })).json()[0];
    assert.deepEqual([conversation.agent, conversation.model], ['claude', 'sonnet'], 'the schedule\'s route');
    const ledger = async (id: string) => (await service.ask({ path: `/api/console/threads/${id}/messages?limit=50`, headers: ALICE })).json().items as { text: string; origin: unknown }[];
    await waitFor(async () => (await ledger(target)).some((m) => m.text === 'Into the thread'), { what: 'the fire to a thread' });
    const first = (await ledger(two.id)).find((m) => m.text === 'Together two');
    assert.equal((first?.origin as { kind: string } | undefined)?.kind, 'schedule', 'the message says where it came from');
    assert.equal((await titles()).filter((t) => t === 'No such route').length, 0, 'a route not offered is refused, as a directive is');
    for (const res of made) assert.equal((await send('DELETE', `${S}/${res.json().id}`, '')).status, 204);
  });

  /**
   * Schedules in `infra`, one per text, daily at the next whole minute (moving the clock a lease past it reaches no
   * other due time): the due time and the schedules made.
   */
  const dailyAtNextMinute = async (texts: readonly string[]) => {
    const due = new Date(Math.ceil((clock.now() + 1) / 60_000) * 60_000);
    const cron = `${due.getUTCMinutes()} ${due.getUTCHours()} * * *`;
    const made = await Promise.all(texts.map((text) => send('POST', S, { cron, text, project: 'infra' })));
    for (const res of made) assert.equal(res.status, 201, res.text);
    return { due, made };
  };

  it("a batch write that fails sends its fires the one-by-one way, in the same look", async () => {
    const { due, made } = await dailyAtNextMinute(['Fallback A', 'Fallback B']);
    batches.length = 0;
    leaveOut = null;
    failWrite = true;
    try {
      await clock.advance(due.getTime() - clock.now());
      const sent = async () => (await threadsIn('infra')).filter((t) => t.title === 'Fallback A' || t.title === 'Fallback B');
      await waitFor(async () => (await sent()).length === 2, { what: 'both fires sent one by one' });
      assert.deepEqual(batches, [2], 'tried together once');
      for (const thread of await sent()) await idleThread(service.port, thread.id, ALICE);
    } finally {
      failWrite = false;
    }
    for (const res of made) assert.equal((await send('DELETE', `${S}/${res.json().id}`, '')).status, 204);
  });

  it('fires opened but never marked done (the instance stopped) are sent again after the lease, and run once', async () => {
    const { due, made } = await dailyAtNextMinute(['Once A', 'Once B']);
    const lagCount = async () => Number(/^console_schedule_lag_seconds_count (\d+)$/m.exec((await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).text)?.[1]);
    const sentBefore = await lagCount();
    batches.length = 0;
    leaveOut = null;
    dropDone = true;
    await clock.advance(due.getTime() - clock.now());
    const once = async () => (await threadsIn('infra')).filter((t) => t.title === 'Once A' || t.title === 'Once B');
    await waitFor(async () => (await once()).length === 2, { what: 'both fires opened' });
    for (const thread of await once()) await idleThread(service.port, thread.id, ALICE);
    dropDone = false;
    assert.deepEqual(batches, [2]);
    await clock.advance(FIRE_LEASE_MS + 1_000);
    await waitFor(async () => (await lagCount()) === sentBefore + 4, { what: 'both fires sent again, and marked done' });
    assert.deepEqual(batches, [2, 2], 'sent again together: the write finds both keys taken, and each goes one by one');
    const threads = await once();
    assert.equal(threads.length, 2, 'no second thread');
    for (const thread of threads) {
      const ledger = (await service.ask({ path: `/api/console/threads/${thread.id}/messages?limit=50`, headers: ALICE })).json().items as { role: string; text: string }[];
      assert.deepEqual(ledger.filter((m) => m.role === 'user').map((m) => m.text), [thread.title], 'one directive: the second send answered by its message_id');
      const [conversation] = (await service.ask({ path: `/api/console/threads/${thread.id}/conversations`, headers: ALICE })).json();
      assert.equal((await service.ask({ path: `/api/console/threads/${thread.id}/conversations/${conversation.id}/runs?limit=50`, headers: ALICE })).json().items.length, 1, 'one run');
    }
    await clock.advance(FIRE_LEASE_MS + 1_000);
    assert.equal(await lagCount(), sentBefore + 4, 'marked done: not sent a third time');
    for (const res of made) assert.equal((await send('DELETE', `${S}/${res.json().id}`, '')).status, 204);
  });
});
