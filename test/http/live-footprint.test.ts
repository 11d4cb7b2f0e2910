import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import type { IncomingMessage, Server } from 'node:http';
import { tmpdir } from 'node:os';
import type { Duplex } from 'node:stream';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { after, before, describe, it } from 'node:test';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fail } from '../../domain/result.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { Storage } from '../../ports/storage.ts';
import { createApp, type App } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logging.ts';
import { attach, createListener, listen, shutdown } from '../../src/server.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { builtDemoAgent } from '../support/built.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Full collections over a few turns: a WeakRef's target is kept to the end of the job that made or read it. */
async function collect(): Promise<void> {
  for (let i = 0; i < 4; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/**
 * What one open live socket holds is what docs/benchmarks.md measures as heap per socket (the fan-out
 * beside a bare `ws` server). A change that brings a per-socket cost back would not show in a timing,
 * so its usual suspects are checked here by count: the upgrade's request kept alive by a closure, a
 * bus subscription per socket, a timer per socket.
 */
describe('what an open live socket holds', () => {
  let server: Server;
  let app: App;
  let port: number;
  let storage: Storage;
  let bus: EventBus;
  const subscribed = { calls: 0, active: 0 };
  const requests: WeakRef<IncomingMessage>[] = [];
  const sockets: Duplex[] = [];
  const open: LiveClient[] = [];

  before(async () => {
    storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const inner = createMemoryEventBus();
    // Counts the router's subscriptions.
    bus = {
      ...inner,
      subscribe: (threadId, listener) => {
        subscribed.calls += 1;
        subscribed.active += 1;
        const unsubscribe = inner.subscribe(threadId, listener);
        return () => {
          subscribed.active -= 1;
          unsubscribe();
        };
      },
    };
    server = createListener({ maxConnections: 1024, maxConnectionsPerClient: null });
    port = await listen(server, 0, '127.0.0.1');
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', PORT: String(port), DATA_DIR: mkdtempSync(join(tmpdir(), 'console-test-')), LOG_LEVEL: 'silent', LIVE_SOCKETS_PER_USER: '100' });
    if (!loaded.ok) throw new Error(JSON.stringify(loaded.error));
    const log = createLogger('silent');
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env });
    app = createApp({ config: loaded.value, log, storage, fetchUiResource: async () => fail('no provider'), runner, offers: runner.offers, bus });
    // Seen before the router: a weak reference to every upgrade's request, and its socket.
    server.prependListener('upgrade', (req: IncomingMessage, socket: Duplex) => {
      requests.push(new WeakRef(req));
      sockets.push(socket);
    });
    attach(server, app);
  });

  after(async () => {
    for (const client of open) client.close();
    await shutdown(server, app, 1000);
  });

  const connect = async (thread: string): Promise<LiveClient> => {
    const client = await connectLive(port, { thread });
    assert.ok('events' in client, `refused ${JSON.stringify(client)}`);
    open.push(client);
    return client;
  };

  it('lets go of the upgrade request once the socket is open and delivering', async () => {
    const from = requests.length;
    const client = await connect(F.root);
    const event = await storage.events.append(F.root, 'message', { delta: 'hello' });
    await bus.publish(event);
    await client.until((events) => events.some((e) => e.seq === event.seq));
    assert.equal(requests.length, from + 1, 'the upgrade was seen');
    await collect();
    assert.equal(requests[from]!.deref(), undefined, 'the IncomingMessage of an open socket was collected');
  });

  it('subscribes to the bus once per thread, however many sockets follow it, and unsubscribes with the last', async () => {
    const thread = F.root;
    const before = subscribed.calls;
    const active = subscribed.active;
    const clients = await Promise.all(Array.from({ length: 12 }, () => connect(thread)));
    assert.equal(subscribed.calls - before, active === 0 ? 1 : 0, 'one subscription for the thread, not one per socket');
    const event = await storage.events.append(thread, 'message', { delta: 'to all' });
    await bus.publish(event);
    for (const client of clients) {
      const events = await client.until((list) => list.some((e) => e.seq === event.seq));
      assert.equal(events.filter((e) => e.seq === event.seq).length, 1, 'each socket gets the event once');
    }
    for (const client of open.splice(0)) {
      client.close();
      await client.closed;
    }
    // The server sees each close a moment after its client does.
    for (let i = 0; i < 100 && subscribed.active > 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(subscribed.active, 0, 'no subscription is left once no socket follows the thread');
  });

  it('gives every open socket the same listeners: no closure of its own (the connection cap\'s `close` included)', async () => {
    const from = sockets.length;
    await Promise.all(Array.from({ length: 3 }, () => connect(F.root)));
    const mine = sockets.slice(from);
    assert.equal(mine.length, 3, 'the upgrades were seen');
    for (const name of ['close', 'error', 'end', 'data']) {
      const [first, ...others] = mine.map((socket) => socket.listeners(name));
      for (const listeners of others) assert.deepEqual(listeners, first, `a socket's own \`${name}\` listener`);
    }
  });

  it('creates no timer per socket, a socket waiting on a console key included', async () => {
    // Warm: the first socket may start the router's shared timers (pings are already running).
    await connect(randomUUID());
    let timers = 0;
    const hook = createHook({
      init: (_id, type) => {
        if (type === 'Timeout') timers += 1;
      },
    });
    hook.enable();
    try {
      // Each waits on a key whose row is not written yet: looked up again every few seconds, by one timer for all.
      await Promise.all(Array.from({ length: 12 }, () => connect(randomUUID())));
      await Promise.all(Array.from({ length: 12 }, () => connect(F.root)));
    } finally {
      hook.disable();
    }
    assert.ok(timers < 6, `${timers} timers made while 24 sockets opened`);
  });
});
