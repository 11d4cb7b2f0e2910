import type { Element } from '@xmpp/client';
import type { Channel, ChannelPlace } from '../../domain/model.ts';
import { parseRoomThread } from '../../domain/xmpp.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ChannelListener, ChannelPort } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import type { Logger } from '../../ports/logger.ts';
import type { XmppAccount } from '../../domain/xmpp.ts';
import { XmppConnection, type Backoff } from './connection.ts';
import { deliverToRoom } from './deliver.ts';
import { xmppInbound, type XmppInbound } from './inbound.ts';
import { roomInvitation } from './invitations.ts';
import { occupantDirectory } from './occupants.ts';
import { barredReason, publicRooms, roomFacts, roomPlace, roomThreads, threadPlaces, type RoomFacts } from './places.ts';

/** The conversations living on a channel, by address (`room@muc#thread`) with their thread's title: what the listing adds to a room's archived threads. */
export type LivingConversations = (channelId: string) => Promise<readonly { address: string; title: string }[]>;

export interface XmppChannelOptions {
  /** The world's channel id of kind `xmpp`. */
  readonly channelId: string;
  readonly account: XmppAccount;
  /** The bot's password, read from the variable `account.password_env` by the caller; held by the connection only. */
  readonly password: string;
  /** The channel's catalog entry (name, agents, linked users) comes from here. */
  readonly catalog: Catalog;
  readonly log: Logger;
  /** Where conversations live on the channel (the seam for the stores; none known without it). */
  readonly living?: LivingConversations;
  /** The bot's reconnection wait (tests shorten it). */
  readonly backoff?: Backoff;
  /** How long a room message's claim holds before another instance may take it (60 s by default). */
  readonly claimMs?: number;
}

/** An XMPP channel's port, with what the composition root needs besides: its connection, and closing it. */
export interface XmppChannelPort extends ChannelPort {
  readonly channelId: string;
  readonly connection: XmppConnection;
  /**
   * From now on, people's messages in the bot's rooms and direct messages go to `handlers` (the app's,
   * built after the channels), the rooms where conversations live are joined, and each room's archive
   * is read from where the bot stopped. One listener at a time (another once it is closed).
   */
  listen(handlers: ChatHandlers): ChannelListener;
  close(): Promise<void>;
}

/**
 * One xmpp channel (contract section 9) served by a bot connection: its places are the MUC
 * service's public rooms and the rooms the bot is in, a room's threads those of its archive and
 * those where conversations live; a delivery is posted in its room thread once. While the server is
 * away, listings throw ChannelUnavailableError (503 `channel_unavailable`) and deliveries reject (the
 * outbox retries); `channels()` keeps answering from what was last listed.
 */
export function xmppChannelPort(options: XmppChannelOptions): XmppChannelPort {
  const { channelId, catalog } = options;
  const connection = new XmppConnection({ account: options.account, password: options.password, log: options.log, backoff: options.backoff });
  const living = options.living ?? (async () => []);
  /** The rooms as last listed, and each room's threads as last listed (what `channels()` answers from, and a teleport checks). */
  let rooms: { facts: RoomFacts; barred: string | null }[] = [];
  const threads = new Map<string, ChannelPlace[]>();
  const inFlight = new Map<string, Promise<void>>();
  let inbound: XmppInbound | null = null;
  const occupants = occupantDirectory(connection);
  /**
   * Invitations that came while nobody listened (those the server kept while the bot was offline arrive as soon
   * as it is online, perhaps before the app is built): handed to the next listener, at most {@link EARLY_INVITATIONS}.
   */
  let early: Element[] = [];
  const stopEarly = connection.listen((stanza) => {
    if (inbound !== null || roomInvitation(stanza, options.account.muc, options.account.jid.toLowerCase()) === null) return;
    early.push(stanza);
    if (early.length > EARLY_INVITATIONS) early.shift();
  });

  const top = (): ChannelPlace[] => rooms.map(({ facts, barred }) => roomPlace(facts, barred, threads.get(facts.jid) ?? []));

  async function presence(room: string) {
    const joined = connection.presenceIn(room);
    return joined === null ? null : joined.catch(() => null);
  }

  async function listRooms(): Promise<ChannelPlace[]> {
    connection.ensureOnline();
    const listed = await publicRooms(connection);
    const jids = new Map(listed.map((room) => [room.jid, room.name]));
    for (const room of connection.rooms()) if (!jids.has(room)) jids.set(room, null);
    rooms = await Promise.all([...jids].map(async ([jid, name]) => {
      const facts = await roomFacts(connection, jid, name);
      return { facts, barred: barredReason(facts, await presence(jid)) };
    }));
    return top();
  }

  async function listThreads(room: string): Promise<ChannelPlace[] | null> {
    connection.ensureOnline();
    if (!rooms.some((r) => r.facts.jid === room)) await listRooms();
    const known = rooms.find((r) => r.facts.jid === room);
    if (known === undefined) return null;
    const places = threadPlaces(room, known.barred, await roomThreads(connection, room, await living(channelId)));
    threads.set(room, places);
    return places;
  }

  return {
    channelId,
    connection,
    async channels(): Promise<Channel[]> {
      const entry = (await catalog.channels()).find((c) => c.id === channelId);
      return entry === undefined ? [] : [{ ...entry, addresses: top() }];
    },
    async places(id, inside) {
      if (id !== channelId) return null;
      return inside === null ? listRooms() : listThreads(inside);
    },
    deliver(delivery: Delivery): Promise<void> {
      // One post at a time per delivery: a second ask while the first is under way waits for it.
      const running = inFlight.get(delivery.id);
      if (running !== undefined) return running;
      const posted = deliverToRoom(connection, delivery)
        .then(({ room, thread }) => remember(room, thread, delivery))
        .finally(() => inFlight.delete(delivery.id));
      inFlight.set(delivery.id, posted);
      return posted;
    },
    listen(handlers) {
      if (inbound !== null) throw new Error(`the xmpp channel ${channelId} listens already`);
      const listening = xmppInbound({
        channelId, connection, handlers, living: () => living(channelId), occupants, log: options.log, ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }),
      });
      inbound = listening;
      for (const invitation of early) listening.take(invitation);
      early = [];
      // Rooms joined before (a delivery's, an earlier listener's) are read from their cursors now.
      for (const room of connection.rooms()) void listening.catchUp(room);
      return {
        catchUp: (id, room) => (id === channelId ? listening.catchUp(room) : Promise.resolve()),
        close() {
          listening.close();
          if (inbound === listening) inbound = null;
        },
      };
    },
    async close() {
      inbound?.close();
      stopEarly();
      occupants.stop();
      await connection.close();
    },
  };

  /** A delivered thread is listed in its room from now on, even before the archive is read again. */
  function remember(room: string, thread: string, delivery: Delivery): void {
    const list = threads.get(room) ?? [];
    const address = delivery.address.id;
    if (list.some((place) => place.id === address) || parseRoomThread(address) === null) return;
    const barred = rooms.find((r) => r.facts.jid === room)?.barred ?? null;
    threads.set(room, [...list, ...threadPlaces(room, barred, [{ thread, name: delivery.title || `Thread ${thread}` }])]);
  }
}

/** The most invitations kept for a listener to come. */
const EARLY_INVITATIONS = 100;

/** Starts the port's connection (kept apart so a test can build it, then start it). */
export function startXmppChannel(port: XmppChannelPort): XmppChannelPort {
  port.connection.start();
  return port;
}
