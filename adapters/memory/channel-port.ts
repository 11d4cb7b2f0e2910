import { uuidv7 } from 'uuidv7';
import { addressedText, isConsoleOrigin } from '../../domain/chat-text.ts';
import type { Address } from '../../domain/model.ts';
import { placesInside } from '../../domain/moves.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { XMPP_KIND } from '../../domain/xmpp.ts';
import { SLACK_KIND } from '../../domain/slack.ts';
import { ChannelUnavailableError, type ChannelListener, type ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';

/** One message in a room of a world file channel, as everyone in the room sees it. */
export interface MemoryPost {
  /** The room's stable id of the message (a UUIDv7: later messages have greater ids, across restarts too). */
  readonly id: string;
  /** Where it was posted: a room (`general`) or a thread of it (`general/t1`). */
  readonly at: string;
  /** Who posted it: a person's or a bot's address, or {@link MEMORY_BOT} for the console's own posts. */
  readonly sender: string;
  readonly text: string;
  /** The id the poster gave it (a delivery's id for the console's own posts), or null. */
  readonly originId: string | null;
}

/** The sender of what the console posts on a world file channel. */
export const MEMORY_BOT = 'console';

/** The world file channels' rooms keep this many messages each (the oldest go first). */
const ROOM_KEEPS = 1_000;
/** A room whose read failed (a message held elsewhere, the inbox away) is read again after this long. */
const RETRY_MS = 5_000;

/** The world file's channels, with their rooms kept in memory: what people post there, and the console's own posts. */
export interface MemoryChannelPort extends ChannelPort {
  /**
   * A person (or another bot: `originId` of the console's kind) posts at a place of a channel; the
   * listener hands it over. Answers the message's id. For tests and in-process callers: the world file's
   * channels have no platform of their own.
   */
  say(message: { readonly channel: string; readonly at: string; readonly sender: string; readonly text: string; readonly originId?: string | null }): Promise<string>;
  /** What a person sees at a place, in order: the messages posted there (at a room, everything in it, its threads' too). */
  read(channel: string, at: string): readonly MemoryPost[];
}

/** A top-level place's id: the part of a place id before its first `/` (`general/t1` is in `general`). */
const roomOf = (at: string): string => at.split('/')[0]!;

/**
 * The channels of the world file (through the catalog), each room a list in memory (this process's):
 * a delivery is posted there once (by its id), a post by a person is handed to the chat-inbound protocol
 * as an xmpp room's message is (contract section 9, inbound; `handlers.session()`: claimed by room and id,
 * handled once, an unlinked or refused sender's reply posted once in the thread), the bot's own posts and
 * other bots' (a console-kind origin id) never, a message addressing the bot by `nick` opening a thread
 * named by its id.
 */
export function memoryChannelPort(catalog: Catalog, options: { readonly nick?: string } = {}): MemoryChannelPort {
  const nick = options.nick ?? MEMORY_BOT;
  /** Each room's messages, by `channel\u0000room`, in the order they were posted. */
  const rooms = new Map<string, MemoryPost[]>();
  let listening: { readonly hear: (channel: string, room: string) => Promise<void>; readonly close: () => void } | null = null;

  const roomKey = (channel: string, room: string) => `${channel}\u0000${room}`;
  function append(channel: string, post: MemoryPost): void {
    const key = roomKey(channel, roomOf(post.at));
    const list = rooms.get(key) ?? [];
    list.push(post);
    if (list.length > ROOM_KEEPS) list.splice(0, list.length - ROOM_KEEPS);
    rooms.set(key, list);
  }

  function listen(handlers: ChatHandlers): ChannelListener {
    if (listening !== null) throw new Error('the world file channels are listened to already');
    const { inbox } = handlers;
    const chat = handlers.session();
    const bots = new Set<string>();
    const chains = new Map<string, Promise<void>>();
    let closed = false;
    /** Ids are UUIDv7: what was posted before this id, in a room never read, is history (not handed over). */
    const since = uuidv7();

    async function handle(channel: string, room: string, post: MemoryPost): Promise<void> {
      if (post.sender === MEMORY_BOT) return;
      if (post.originId !== null && isConsoleOrigin(post.originId)) bots.add(post.sender);
      if (bots.has(post.sender) || post.text.trim() === '') return;
      const addressed = addressedText(post.text, nick);
      // A new thread of the room, named by the message's id (where a reply to a message in the room goes, too).
      const opened = `${room}/${post.id}`;
      const address: Address = { channel, id: post.at };
      const handled = await chat.message(
        { channel, address, opens: addressed === null ? null : { channel, id: opened }, sender: post.sender, text: addressed ?? post.text, id: post.id },
        { place: room, replyAt: post.at === room ? opened : post.at },
      );
      // Claimed by another listener and not done: the cursor stays before it, and the room is read again.
      if (handled.kind === 'held') throw new Error(`the message ${post.id} is held by another listener`);
    }

    /** Hands over the room's messages after its cursor, in order; a room never read starts at what was posted once this listener started. */
    async function read(channel: string, room: string): Promise<void> {
      const list = rooms.get(roomKey(channel, room));
      if (list === undefined || list.length === 0) return;
      const from = (await inbox.cursor(channel, room))?.id ?? since;
      for (const post of [...list]) {
        if (closed) return;
        if (post.id <= from) continue;
        await handle(channel, room, post);
        await inbox.advance(channel, room, { id: post.id, at: new Date().toISOString() });
      }
    }

    const timers = new Set<ReturnType<typeof setTimeout>>();
    // A room's work, one at a time: a failed read leaves the cursor where it was, and the room is read again a little later.
    const hear = (channel: string, room: string): Promise<void> => {
      const key = roomKey(channel, room);
      const next = (chains.get(key) ?? Promise.resolve()).then(() => (closed ? undefined : read(channel, room))).catch(() => {
        if (closed) return;
        const timer = setTimeout(() => {
          timers.delete(timer);
          void hear(channel, room);
        }, RETRY_MS);
        timer.unref?.();
        timers.add(timer);
      });
      chains.set(key, next);
      return next;
    };

    const self = {
      hear,
      close: () => {
        closed = true;
        for (const timer of timers) clearTimeout(timer);
      },
    };
    listening = self;
    for (const key of rooms.keys()) {
      const [channel, room] = key.split('\u0000') as [string, string];
      void hear(channel, room);
    }
    return {
      catchUp: (channel, room) => hear(channel, room),
      close() {
        self.close();
        if (listening === self) listening = null;
      },
    };
  }

  /**
   * A channel of a platform kind (xmpp, slack) is served by its own adapter. Reaching this port, it has none on
   * this instance (its settings were removed from the world while its catalog row stayed): it is away,
   * so a listing answers 503 and a delivery waits in the outbox rather than being taken and lost.
   */
  function unserved(channel: { readonly id: string; readonly kind: string } | undefined): void {
    if (channel?.kind === XMPP_KIND || channel?.kind === SLACK_KIND) throw new ChannelUnavailableError(`Channel ${channel.id} has no connection settings on this instance`);
  }

  return {
    channels: () => catalog.channels(),
    async places(channelId, inside) {
      const channel = (await catalog.channels()).find((c) => c.id === channelId);
      unserved(channel);
      return channel === undefined ? null : placesInside(channel, inside);
    },
    async deliver(delivery: Delivery) {
      unserved((await catalog.channels()).find((c) => c.id === delivery.channel));
      const at = delivery.address.id;
      const room = rooms.get(roomKey(delivery.channel, roomOf(at))) ?? [];
      if (room.some((post) => post.sender === MEMORY_BOT && post.originId === delivery.id)) return;
      const text = delivery.new_thread && delivery.title.trim() !== '' ? `${delivery.title}\n\n${delivery.text}` : delivery.text;
      append(delivery.channel, { id: uuidv7(), at, sender: MEMORY_BOT, text, originId: delivery.id });
    },
    listen,
    async say(message) {
      const post: MemoryPost = { id: uuidv7(), at: message.at, sender: message.sender, text: message.text, originId: message.originId ?? null };
      append(message.channel, post);
      await listening?.hear(message.channel, roomOf(message.at));
      return post.id;
    },
    read: (channel, at) => (rooms.get(roomKey(channel, roomOf(at))) ?? []).filter((post) => at === roomOf(at) || post.at === at),
  };
}
