import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const url = process.env.TEST_DATABASE_URL;

/** The query method of pg's Client, which the bus's connection sends its NOTIFYs through. */
const pgClient = (createRequire(import.meta.url)('pg') as { Client: { prototype: { query: (...args: unknown[]) => unknown } } }).Client.prototype;

// The other instances' sockets must not wait behind this instance's own fan-out (docs/benchmarks.md,
// two instances): the NOTIFY is handed to the connection before the local subscribers get the event.
describe('the PostgreSQL bus announces an event before its own fan-out', { skip: url ? false : 'TEST_DATABASE_URL is not set' }, () => {
  let scratch: ScratchDatabase;
  let storage: MikroOrmStorage;
  let bus: EventBus;
  let peer: EventBus;
  const original = pgClient.query;
  const notified: string[] = [];

  before(async () => {
    scratch = await createScratchDatabase(url!);
    storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 2 });
    await storage.importWorld(fixtureWorld());
    pgClient.query = function (this: unknown, ...args: unknown[]) {
      if (typeof args[0] === 'string' && args[0].includes('pg_notify')) notified.push(args[0]);
      return original.apply(this, args);
    };
    bus = await createPostgresEventBus({ url: scratch.url, events: storage.events, local: createMemoryEventBus() });
    peer = await createPostgresEventBus({ url: scratch.url, events: storage.events, local: createMemoryEventBus() });
  });
  after(async () => {
    pgClient.query = original;
    await bus?.close();
    await peer?.close();
    await storage?.close();
    await scratch?.drop();
  });

  it('the NOTIFY is sent when a local subscriber runs, and the event crosses once', async () => {
    const seenLocally: number[] = [];
    // One event in this test: the NOTIFYs handed to pg when the local subscriber runs.
    bus.subscribe(F.root, () => seenLocally.push(notified.length));
    const crossed: number[] = [];
    let arrived: () => void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    peer.subscribe(F.root, (event) => {
      crossed.push(event.seq);
      arrived();
    });
    const event = await storage.events.append(F.root, 'message', { delta: 'hello' });
    await bus.publish(event);
    await arrival;
    assert.deepEqual(seenLocally, [1], 'the local subscriber ran before the NOTIFY was sent');
    assert.deepEqual(crossed, [event.seq]);
  });
});
