// Issue 26, outbound: a turn's reply on a thread living on a chat channel goes to the room through the
// delivery outbox. The process dies right after the reply's event is stored (a storage wrapper: from that
// moment on nothing this instance does reaches the storage, as after kill -9), then a new instance starts on
// the same storage: the reply is posted in the room once. When the post was written after the event, in a
// write of its own, it was lost there: the room never saw the answer.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import type { ChatMessage } from '../../core/channels/inbound.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { startService } from '../support/service.ts';
import { storageKinds } from '../support/storage-kinds.ts';

const ROOM = { thread: testId(32_000), conversation: testId(32_002), address: { channel: 'team-chat', id: 'general/relay-fault' } };
const LINKS: Record<string, string> = { 'bob@chat.example': 'bob' };
const LEASE_MS = 1_500;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `found` answers something (polling), for at most 20 s. */
async function eventually<T>(what: string, found: () => T | undefined | null | false): Promise<T> {
  for (const started = Date.now(); Date.now() - started < 20_000; await sleep(25)) {
    const value = found();
    if (value !== undefined && value !== null && value !== false) return value;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** The world's channels over a platform that records every post it was handed (doubles included). */
function recordingChannels(storage: Storage) {
  const inner = memoryChannelPort(storage.catalog);
  const posted: Delivery[] = [];
  const port: ChannelPort = {
    channels: () => inner.channels(),
    places: (channel, inside) => inner.places(channel, inside),
    listen: (handlers) => inner.listen(handlers),
    async deliver(delivery) {
      posted.push(delivery);
    },
  };
  return { port, posted };
}

/**
 * `storage` as a process that dies the moment `fatal` is stored: that append's write is done, then
 * it and everything after it (every store, every call) fails, as nothing of a killed process reaches
 * the storage. Closing still closes the real storage.
 */
function dyingAfter(storage: Storage, fatal: (event: WireEvent) => boolean) {
  let dead = false;
  let died: (event: WireEvent) => void = () => {};
  const death = new Promise<WireEvent>((resolve) => (died = resolve));
  const gone = () => new Error('this instance is dead');
  // A call under way when it dies (a claim sent to PostgreSQL just before) may still be done there, as with
  // kill -9, but its answer reaches nothing: the dead instance acts on none (it once posted a claimed reply).
  const guard = (fn: (...args: unknown[]) => unknown, self: unknown) => (...args: unknown[]) => {
    if (dead) return Promise.reject(gone());
    const result = fn.apply(self, args);
    return result instanceof Promise ? result.then((value: unknown) => {
      if (dead) throw gone();
      return value;
    }) : result;
  };
  const store = (target: object): object => new Proxy(target, {
    get(object, key) {
      const value = Reflect.get(object, key) as unknown;
      return typeof value === 'function' ? guard(value as (...args: unknown[]) => unknown, object) : value;
    },
  });
  const events = store({
    ...storage.events,
    async append(...args: Parameters<Storage['events']['append']>) {
      const event = await storage.events.append(...args);
      if (fatal(event)) {
        dead = true;
        died(event);
        throw gone();
      }
      return event;
    },
  });
  const dying = new Proxy(storage, {
    get(object, key) {
      if (key === 'close') return () => storage.close();
      if (key === 'events') return events;
      const value = Reflect.get(object, key) as unknown;
      if (typeof value === 'function') return guard(value as (...args: unknown[]) => unknown, object);
      return typeof value === 'object' && value !== null && key !== 'orm' ? store(value) : value;
    },
  });
  return { storage: dying, death };
}

const isReply = (event: WireEvent) => event.type === 'message' && (event.data['message'] as { role?: unknown } | undefined)?.role === 'assistant';

for (const kind of storageKinds('relay_fault')) {
  describe(`a chat reply survives a crash right after its event is stored: ${kind.name}`, () => {
    it('after a restart the reply is posted in the room exactly once', { timeout: 120_000 }, async (t) => {
      const opened = await kind.open();
      let second: Awaited<ReturnType<typeof startService>> | null = null;
      t.after(async () => {
        await second?.close();
        await opened.close();
      });
      const world = fixtureWorld();
      await opened.storage.importWorld({
        ...world,
        threads: [...world.threads, {
          id: ROOM.thread, key: null, channel: 'team-chat', owner: 'alice', members: ['bob'], project: 'acme-web', title: 'Relay fault', fork_of: null, fork_cutoff: null,
          messages: [],
          conversations: [{ id: ROOM.conversation, agent: 'claude', model: 'opus', permission_mode: 'default', effort: null, address: ROOM.address, turn_running: false, pending: [], runs: [] }],
        }],
      });
      const env = { TURN_LEASE_MS: String(LEASE_MS) };
      const options = {
        chatLinks: async (channel: string, sender: string) => (channel === 'team-chat' ? LINKS[sender] ?? null : null),
        // A delivery the dead instance claimed in its last moment is posted by the next once the claim lapses.
        deliveryTiming: { intervalMs: 100, retryMs: 50, maxRetryMs: 200, claimMs: 2 * LEASE_MS },
      };

      // The first instance: it dies as the agent's reply is stored.
      const dying = dyingAfter(opened.storage, (event) => event.thread_id === ROOM.thread && isReply(event));
      const firstPosts = recordingChannels(opened.storage);
      const first = await startService(env, { ...options, storage: dying.storage, channels: firstPosts.port });
      await first.knowOffers();
      const said: ChatMessage = { channel: 'team-chat', opens: null, id: `stanza-${process.pid}-relay`, address: ROOM.address, sender: 'bob@chat.example', text: 'Hello from the room' };
      assert.equal((await first.receiveChat(said)).kind, 'directive');
      const reply = await Promise.race([dying.death, sleep(30_000).then(() => assert.fail('the reply was never stored'))]);
      const replyText = (reply.data['message'] as { text: string }).text;
      await first.close();

      // The restart, on the same data: the reply is posted; the swept turn's end follows it.
      const storage = await opened.reopen();
      const posts = recordingChannels(storage);
      second = await startService(env, { ...options, storage, channels: posts.port });
      const here = () => posts.posted.filter((p) => p.channel === ROOM.address.channel && p.address.id === ROOM.address.id);
      // The run the dead instance held is swept after its lease: its error line is posted after the reply was due.
      await eventually('the swept turn posted', () => here().some((p) => p.text.startsWith('The turn failed:')));
      await eventually('the reply posted', () => posts.posted.some((p) => p.text === replyText));
      await sleep(300);
      const replies = [...firstPosts.posted, ...posts.posted].filter((p) => p.text === replyText);
      assert.equal(replies.length, 1, `the reply posted once (posts: ${JSON.stringify(here().map((p) => p.text))})`);
      assert.deepEqual(replies[0]!.address, ROOM.address);
      assert.equal(firstPosts.posted.length, 0, 'the dead instance posted nothing');
      const left = await storage.outbox.claimDue('check', 60_000, 100);
      assert.deepEqual(left.filter((d) => d.text === replyText), [], 'nothing of it is left to post again');
    });
  });
}
