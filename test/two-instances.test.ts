import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import type { WireEvent } from '../domain/events.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { connectLive, typesOf, type LiveClient } from './support/live-client.ts';
import { createScratchDatabase, type ScratchDatabase } from './support/scratch-database.ts';
import { startService, type TestService } from './support/service.ts';

const url = process.env.TEST_DATABASE_URL;
const ended = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');

describe('two service instances on one PostgreSQL', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let scratch: ScratchDatabase;
  let a: TestService;
  let b: TestService;

  /** One instance: its own storage connection pool, its own LISTEN connection, its own agents. */
  async function instance(): Promise<TestService> {
    const storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 });
    const bus = await createPostgresEventBus({ url: scratch.url, events: storage.events, local: createMemoryEventBus() });
    return startService({ CONSOLE_STORAGE: 'postgres', DATABASE_URL: scratch.url }, { storage, bus });
  }

  before(async () => {
    scratch = await createScratchDatabase(url!);
    a = await instance();
    b = await instance();
    const seed = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1 });
    await seed.importWorld(fixtureWorld());
    await seed.close();
  });
  after(async () => {
    await a?.close();
    await b?.close();
    await scratch?.drop();
  });

  const direct = (service: TestService, ref: string, text: string) =>
    service.ask({ method: 'POST', path: `/api/console/threads/${ref}/directives`, headers: { authorization: 'Bearer token-alice' }, body: JSON.stringify({ text }) });

  it('a socket on instance B sees every event of a run started on instance A, in order', async () => {
    const key = randomUUID();
    const onB = (await connectLive(b.port, { thread: key, after: '0' })) as LiveClient;
    assert.ok(!('refused' in onB));
    const res = await direct(a, key, 'Hello from A');
    assert.equal(res.status, 202, res.text);
    const events = await onB.until(ended);
    onB.close();
    assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1));
    assert.equal(typesOf(events)[1], 'run_started');
    assert.equal(typesOf(events).at(-1), 'reflex_asleep');
    assert.ok(events.every((e) => e.thread_id === res.json().thread_id));
  });

  it('a client that disconnects from B and reconnects to A with after misses nothing', async () => {
    const key = randomUUID();
    const onB = (await connectLive(b.port, { thread: key, after: '0' })) as LiveClient;
    const { thread_id } = (await direct(a, key, '[slow] one word at a time')).json();
    const seen = await onB.until((events) => events.some((e) => e.type === 'run_started'));
    onB.close();
    const onA = (await connectLive(a.port, { thread: thread_id, after: String(seen.at(-1)!.seq) })) as LiveClient;
    const rest = await onA.until(ended);
    onA.close();
    const all = [...seen, ...rest];
    assert.deepEqual(all.map((e) => e.seq), all.map((_, i) => i + 1));
  });

  it('an approval asked on A is answered through B', async () => {
    const key = randomUUID();
    const onA = (await connectLive(a.port, { thread: key, after: '0' })) as LiveClient;
    const { thread_id } = (await direct(a, key, '[approval] may I?')).json();
    const asked = (await onA.until((events) => events.some((e) => e.type === 'approval_requested'))).find((e) => e.type === 'approval_requested')!;
    const id = (asked.data.pending as { id: string }).id;
    const answered = await b.ask({
      method: 'POST', path: `/api/console/threads/${thread_id}/responses`,
      headers: { authorization: 'Bearer token-alice' }, body: JSON.stringify({ responses: [{ id, option: 'allow' }] }),
    });
    assert.equal(answered.status, 202);
    const events = await onA.until(ended);
    onA.close();
    assert.equal(typesOf(events).at(-2), 'run_finished');
  });
});
