import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService } from '../support/service.ts';

/**
 * A socket waiting on a console key whose `thread_created` signal is lost (another instance's
 * notification cut mid-send, with no reconnect here to tell of it) still starts delivering: it looks
 * for the key's row every few seconds.
 */
describe('a key socket whose signal is lost', () => {
  it('finds the thread by looking again, and gets every event from the first', { timeout: 30_000 }, async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const inner = createMemoryEventBus();
    const lossy: EventBus = { ...inner, signal: async (signal) => (signal.kind === 'thread_created' ? undefined : inner.signal(signal)) };
    const service = await startService({}, { storage, bus: lossy });
    try {
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key })) as LiveClient;
      const res = await service.ask({
        method: 'POST', path: `/api/console/threads/${key}/directives`,
        headers: { authorization: 'Bearer token-alice', 'content-type': 'application/json' }, body: JSON.stringify({ text: 'Hello', model: 'claude:opus' }),
      });
      assert.equal(res.status, 202, res.text);
      const events = await socket.until((e) => e.some((x) => x.type === 'reflex_asleep'), 20_000);
      assert.deepEqual(events.map((e) => e.seq), events.map((_, i) => i + 1), 'from the first event, none lost');
      socket.close();
    } finally {
      await service.close();
    }
  });
});
