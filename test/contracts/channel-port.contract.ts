import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { ChannelPlace } from '../../domain/model.ts';
import { newThreadAddress } from '../../domain/operations.ts';
import { ChannelUnavailableError, type ChannelPort, type Delivery } from '../../ports/channel-port.ts';

/** What a channel suite runs on: a port, one of its channels, and the places the suite expects there. */
export interface ChannelFixture {
  readonly port: ChannelPort;
  readonly channel: { readonly id: string; readonly kind: string };
  /** A top-level room a conversation can land in. */
  readonly open: { readonly id: string; readonly inside: string };
  /** A thread listed inside `open`. */
  readonly thread: string;
  /** A top-level room listed as barred, and what its reason says. */
  readonly barred: { readonly id: string; readonly reason: RegExp };
  /** What a person on the platform sees of a delivery (null: the channel is no platform, and keeps nothing). */
  readonly seen: ((deliveryId: string) => Promise<readonly { thread: string | null; body: string | null }[]>) | null;
  /** The same channel served by another port with nothing in memory (another instance, a restart), or null. */
  readonly another: (() => Promise<ChannelPort & { close(): Promise<void> }>) | null;
  /** Stops and starts the platform's server, or null when there is none to stop. */
  readonly server: { stop(): Promise<void>; start(): Promise<void> } | null;
  close(): Promise<void>;
}

const PLACE_KEYS = ['barred', 'children', 'id', 'inside', 'name', 'shared'];

function assertPlace(place: ChannelPlace): void {
  assert.deepEqual(Object.keys(place).sort(), PLACE_KEYS, `a place has exactly ${PLACE_KEYS.join(', ')}`);
  assert.equal(typeof place.id, 'string');
  assert.equal(typeof place.name, 'string');
  assert.equal(typeof place.shared, 'boolean');
  assert.ok(place.inside === null || typeof place.inside === 'string');
  assert.ok(place.barred === null || (typeof place.barred === 'string' && place.barred !== ''));
  place.children.forEach(assertPlace);
}

/** Asks until it resolves, as the outbox does (bounded). */
async function deliverEventually(port: ChannelPort, delivery: Delivery, ms = 30_000): Promise<number> {
  const end = Date.now() + ms;
  for (let attempts = 1; ; attempts++) {
    try {
      await port.deliver(delivery);
      return attempts;
    } catch (error) {
      if (Date.now() > end) throw error;
      await sleep(300);
    }
  }
}

/** The ChannelPort contract (docs/channels.md): the catalog entry, places a level at a time with barred reasons, and deliveries posted once. */
export function channelPortContract(name: string, factory: () => Promise<ChannelFixture>): void {
  describe(`channel port contract: ${name}`, () => {
    let f: ChannelFixture;
    before(async () => {
      f = await factory();
    });
    after(async () => {
      await f?.close();
    });

    const delivery = (overrides: Partial<Delivery> = {}): Delivery => {
      const id = uuidv7();
      return {
        id, channel: f.channel.id, place: f.open.id, new_thread: true,
        address: { channel: f.channel.id, id: newThreadAddress(f.channel, f.open.id, id) },
        title: 'Fix the build', text: `alice moved the conversation "Fix the build" here from console. (${id})`, ...overrides,
      };
    };

    it('lists its channel with the catalog fields, and its places with the place fields', async () => {
      const channel = (await f.port.channels()).find((c) => c.id === f.channel.id);
      assert.ok(channel, 'the channel is listed');
      assert.equal(channel.kind, f.channel.kind);
      for (const key of ['agents', 'linked_users', 'addresses'] as const) assert.ok(Array.isArray(channel[key]), `${key} is a list`);
      assert.equal(typeof channel.name, 'string');
      assert.equal(typeof channel.browsable, 'boolean');
      channel.addresses.forEach(assertPlace);
    });

    it('answers the top places: the open room opens, the barred one says why', async () => {
      const top = await f.port.places(f.channel.id, null);
      assert.ok(top !== null);
      top.forEach(assertPlace);
      const open = top.find((p) => p.id === f.open.id);
      assert.ok(open, `${f.open.id} is listed: ${JSON.stringify(top.map((p) => p.id))}`);
      assert.equal(open.barred, null);
      assert.equal(open.inside, f.open.inside);
      const barred = top.find((p) => p.id === f.barred.id);
      assert.ok(barred, `${f.barred.id} is listed`);
      assert.match(barred.barred ?? '', f.barred.reason);
      // What was listed is what the channel entry carries (the teleport checks a destination against it).
      const entry = (await f.port.channels()).find((c) => c.id === f.channel.id)!;
      assert.ok(entry.addresses.some((p) => p.id === f.open.id));
    });

    it("answers a room's threads inside it, and null for what opens nothing", async () => {
      const inside = await f.port.places(f.channel.id, f.open.inside);
      assert.ok(inside !== null);
      inside.forEach(assertPlace);
      const thread = inside.find((p) => p.id === f.thread);
      assert.ok(thread, `${f.thread} is listed inside: ${JSON.stringify(inside.map((p) => p.id))}`);
      assert.equal(thread.barred, null);
      assert.equal(await f.port.places(f.channel.id, 'nothing-opens-by-this'), null);
      assert.equal(await f.port.places('no-such-channel', null), null);
    });

    it('takes a delivery asked twice (at once, and again after) and posts it once', async () => {
      const d = delivery();
      await Promise.all([f.port.deliver(d), f.port.deliver(d)]);
      await f.port.deliver(d);
      if (f.seen === null) return;
      const seen = await f.seen(d.id);
      assert.equal(seen.length, 1, `posted once: ${JSON.stringify(seen)}`);
      assert.equal(seen[0]!.thread, d.id, 'a new thread is the delivery id');
      assert.ok(seen[0]!.body?.includes(d.text));
    });

    it('posts nothing again when another instance is asked the same delivery (a retry after a lost answer)', async (t) => {
      if (f.another === null || f.seen === null) return t.skip('no second instance of this channel');
      const d = delivery();
      await f.port.deliver(d);
      const other = await f.another();
      try {
        await deliverEventually(other, d);
      } finally {
        await other.close();
      }
      assert.equal((await f.seen(d.id)).length, 1);
    });

    it('lands in an existing thread of a room with new_thread false', async () => {
      const d = delivery({ place: f.thread, new_thread: false, address: { channel: f.channel.id, id: f.thread } });
      await f.port.deliver(d);
      if (f.seen === null) return;
      const seen = await f.seen(d.id);
      assert.equal(seen.length, 1);
      assert.equal(`${f.open.id}#${seen[0]!.thread}`, f.thread);
    });

    it('while its server is down: places answer unavailable and a delivery is refused; once it is back, the delivery is posted once', async (t) => {
      if (f.server === null || f.seen === null) return t.skip('no server to stop');
      const d = delivery();
      await f.server.stop();
      try {
        await assert.rejects(f.port.places(f.channel.id, null), ChannelUnavailableError);
        await assert.rejects(f.port.deliver(d));
        await assert.rejects(f.port.deliver(d));
      } finally {
        await f.server.start();
      }
      const attempts = await deliverEventually(f.port, d);
      assert.ok(attempts >= 1);
      await f.port.deliver(d);
      assert.equal((await f.seen(d.id)).length, 1);
      const top = await f.port.places(f.channel.id, null);
      assert.ok(top?.some((p) => p.id === f.open.id));
    });
  });
}
