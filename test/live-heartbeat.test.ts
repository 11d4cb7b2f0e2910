import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import pino from 'pino';
import { WebSocket } from 'ws';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { ok } from '../domain/result.ts';
import type { RequestContext } from '../src/http/context.ts';
import { LIVE_PATH, liveSocket } from '../src/live/socket.ts';
import { F, fixtureWorld } from './support/fixture-world.ts';

/**
 * The router's one ping timer, for every socket: a client that stops answering pings is dropped by the
 * next round, one that answers stays open. (The router is mounted on a bare node server here, with
 * every caller taken for alice: the edge and authentication have their own tests.)
 */
describe('live socket heartbeats', () => {
  it('drop a client that does not answer a ping by the next, and keep one that does', { timeout: 20_000 }, async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const log = pino({ level: 'silent' });
    const live = liveSocket({ storage, bus: createMemoryEventBus(), authenticate: async () => ok({ id: 'alice', name: 'Alice', via: 'world' as const, expires_at: null }), log, pingMs: 100 });
    const server = createServer();
    server.on('upgrade', (req, socket, head) => {
      const [path, search] = (req.url ?? '').split('?');
      const ctx = { req, id: 'test', log, method: 'GET', path: path!, query: new URLSearchParams(search ?? ''), search: search ?? null, scheme: 'http', host: req.headers.host, origin: null, route: null } satisfies RequestContext;
      live.upgrade(ctx, socket, head);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${LIVE_PATH}?thread=${F.root}`;
    const open = async (autoPong: boolean) => {
      const ws = new WebSocket(url, { autoPong });
      await once(ws, 'open');
      return ws;
    };
    try {
      const answering = await open(true);
      const silent = await open(false);
      let pings = 0;
      silent.on('ping', () => (pings += 1));
      const [code] = (await once(silent, 'close')) as [number];
      assert.equal(code, 1006, 'cut without a close frame (terminated)');
      assert.ok(pings >= 1, 'it was pinged before it was dropped');
      assert.equal(answering.readyState, WebSocket.OPEN, 'a client that answers stays open');
      // Several rounds later, still open: a window in which it must not be dropped.
      await new Promise((resolve) => setTimeout(resolve, 400));
      assert.equal(answering.readyState, WebSocket.OPEN);
      answering.close();
    } finally {
      await live.close();
      server.close();
    }
  });

  it('close (1008) a socket whose session or token expired, at the first ping round after, and keep a world token\'s', { timeout: 20_000 }, async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const log = pino({ level: 'silent' });
    const expiresAt = new Date(Date.now() + 300).toISOString();
    // A request with `?expiring` is taken for a session that ends in 300 ms.
    const live = liveSocket({
      storage, bus: createMemoryEventBus(), log, pingMs: 100,
      authenticate: async (ctx) => ok({ id: 'alice', name: 'Alice', via: ctx.query.has('expiring') ? 'session' as const : 'world' as const, expires_at: ctx.query.has('expiring') ? expiresAt : null }),
    });
    const server = createServer();
    server.on('upgrade', (req, socket, head) => {
      const [path, search] = (req.url ?? '').split('?');
      const ctx = { req, id: 'test', log, method: 'GET', path: path!, query: new URLSearchParams(search ?? ''), search: search ?? null, scheme: 'http', host: req.headers.host, origin: null, route: null } satisfies RequestContext;
      live.upgrade(ctx, socket, head);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const base = `ws://127.0.0.1:${(server.address() as AddressInfo).port}${LIVE_PATH}?thread=${F.root}`;
    try {
      const expiring = new WebSocket(`${base}&expiring=1`);
      const lasting = new WebSocket(base);
      await Promise.all([once(expiring, 'open'), once(lasting, 'open')]);
      const [code] = (await once(expiring, 'close')) as [number];
      assert.equal(code, 1008);
      assert.ok(Date.now() >= Date.parse(expiresAt), 'not before it expired');
      assert.equal(lasting.readyState, WebSocket.OPEN);
      lasting.close();
    } finally {
      await live.close();
      server.close();
    }
  });
});
