import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

// What a lost notification looks like: a row or an event is stored, and the bus never says so.
// The memory bus never reconnects; the test sends the local `reconnected` signal itself.
describe('live socket after the bus reconnects', () => {
  const bus = createMemoryEventBus();
  let storage: Storage;
  let service: TestService;
  before(async () => {
    storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage, bus });
  });
  after(() => service.close());

  const open = async (query: Record<string, string>) => {
    const client = await connectLive(service.port, query);
    assert.ok(!('refused' in client));
    return client as LiveClient;
  };
  const newThread = async (key = randomUUID()) => (await storage.writer.createConsoleThread({
    owner: 'alice', key, project: null, title: 't', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
  })).thread.id;
  const reconnected = () => bus.signal({ kind: 'reconnected' });

  it('a socket fills its gap at once: the last events of a run are not waited for forever', async () => {
    const thread = await newThread();
    await storage.events.append(thread, 'run_started', {});
    const client = await open({ thread, after: '0' });
    await client.until((events) => events.length === 1);
    await storage.events.append(thread, 'run_finished', {}); // stored, never published
    await storage.events.append(thread, 'reflex_asleep', {});
    await reconnected();
    const events = await client.until((got) => got.length === 3, 5_000);
    assert.deepEqual(events.map((e) => [e.seq, e.type]), [[1, 'run_started'], [2, 'run_finished'], [3, 'reflex_asleep']]);
    await reconnected();
    await sleep(50); // a window in which nothing more must arrive
    assert.equal(client.events.length, 3, 'nothing sent twice');
    client.close();
  });

  it('a socket opened without after gets what was stored after it subscribed, nothing before', async () => {
    const thread = await newThread();
    await storage.events.append(thread, 'message', { old: true });
    // The socket notes where the log ends (it reads the thread's last seq) before anything is stored after it.
    const lastSeq = storage.events.lastSeq;
    let ended = false;
    storage.events.lastSeq = async (id) => {
      const seq = await lastSeq.call(storage.events, id);
      if (id === thread) ended = true;
      return seq;
    };
    const client = await open({ thread });
    try {
      await waitFor(() => ended, { what: 'the socket to note where the log ended' });
    } finally {
      storage.events.lastSeq = lastSeq;
    }
    await storage.events.append(thread, 'reflex_asleep', {});
    await reconnected();
    const events = await client.until((got) => got.length === 1, 5_000);
    assert.deepEqual(events.map((e) => e.seq), [2]);
    client.close();
  });

  it('a socket waiting on a key looks for its row again: a lost thread_created does not strand it', async () => {
    const key = randomUUID();
    const client = await open({ thread: key, after: '0' });
    const thread = await newThread(key); // no thread_created signal
    await storage.events.append(thread, 'run_started', {});
    await sleep(50); // a window in which nothing must arrive before the reconnect
    assert.equal(client.events.length, 0);
    await reconnected();
    const events = await client.until((got) => got.length === 1, 5_000);
    assert.equal(events[0]!.thread_id, thread);
    client.close();
  });
});
