import { randomUUID } from 'node:crypto';
import type { Element } from '@xmpp/client';
import { addressedText, isConsoleOrigin } from '../../domain/chat-text.ts';
import type { Address } from '../../domain/model.ts';
import { parseRoomThread, roomThreadAddress } from '../../domain/xmpp.ts';
import type { ChatCursor } from '../../ports/chat-inbox.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import type { Logger } from '../../ports/logger.ts';
import { archivePage } from './archive.ts';
import type { XmppConnection } from './connection.ts';
import type { OccupantDirectory } from './occupants.ts';
import { bareJid, directMessage, messageFacts, NS } from './stanzas.ts';

/** The conversations living on the channel: the rooms the bot joins. */
export type LivingRooms = () => Promise<readonly { address: string }[]>;

/**
 * A room message another holder has claimed and not done: it may be handling it now, or it died
 * mid-way (kill -9). The room's cursor must not move past it: the archive is read again from before it
 * until it is done, or its claim lapses and this instance takes it.
 */
class HeldElsewhere extends Error {
  override readonly name = 'HeldElsewhere';
}
/** A failed message is read again from the archive after this long. */
const RETRY_MS = 5_000;
/** The rooms where conversations live are looked up again this often (another instance may have landed one). */
const LIVING_EVERY_MS = 30_000;
/** At most this many archive pages are read in one catch-up (then the next one goes on from there). */
const CATCH_UP_PAGES = 50;
const PAGE = 100;
export { addressedText };

/**
 * The inbound side of an xmpp channel (contract section 9): people's messages in the rooms the bot is
 * in, and direct messages to the bot, are read into the chat-inbound protocol's terms and handed to it
 * (`handlers.session()`: claimed once across instances and reconnects by the room's stanza id, handed
 * to the app, answered, done), and on each (re)join a room's archive is read from where the bot stopped
 * (`handlers.inbox`), so nothing posted while it was away is lost. A room's messages are handled in
 * order, one at a time; its cursor moves only past a message that was handled.
 */
export function xmppInbound(options: {
  readonly channelId: string;
  readonly connection: XmppConnection;
  readonly handlers: ChatHandlers;
  readonly living: LivingRooms;
  /** Who the occupants of the bot's rooms are, from their presence since the connection started (see `occupants.ts`). */
  readonly occupants: OccupantDirectory;
  readonly log: Logger;
  /** How long a claim of a message holds before another instance may take it (60 s by default). */
  readonly claimMs?: number;
}) {
  const { channelId: channel, connection, handlers, log } = options;
  const { inbox } = handlers;
  const chat = handlers.session(options.claimMs === undefined ? {} : { claimMs: options.claimMs });
  const account = connection.account;
  const botJid = account.jid.toLowerCase();
  const { occupants } = options;
  /** Senders seen posting as a bot (a console origin-id): ignored from then on. */
  const bots = new Set<string>();
  /** Each room's work, one at a time: messages live and from the archive, in order. */
  const chains = new Map<string, Promise<void>>();
  /** Rooms where a message failed: the cursor stays until a catch-up reads past it. */
  const dirty = new Set<string>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const enqueue = (room: string, work: () => Promise<void>): Promise<void> => {
    const next = (chains.get(room) ?? Promise.resolve()).then(work).catch((error: unknown) => {
      if (closed) return;
      if (error instanceof HeldElsewhere) log.info({ room, message: error.message }, 'an xmpp room message is claimed and not done yet; the archive is read again');
      else log.warn({ err: error, room }, 'an xmpp room message could not be handled; the archive is read again');
      dirty.add(room);
      later(() => void catchUp(room), RETRY_MS);
    });
    chains.set(room, next);
    return next;
  };

  const later = (call: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) call();
    }, ms);
    timer.unref?.();
    timers.add(timer);
  };

  const advance = async (room: string, cursor: ChatCursor | null) => {
    if (cursor !== null && !dirty.has(room)) await inbox.advance(channel, room, cursor);
  };

  /**
   * Handles one room message (live, or archived under `archiveId`: an archived message carries no
   * stanza id of its own, the archive's id is it); answers the cursor it leaves the room at.
   */
  async function roomMessage(room: string, message: Element, at: string, archiveId: string | null = null): Promise<ChatCursor | null> {
    const read = messageFacts(message, room);
    const facts = { ...read, stanzaId: archiveId ?? read.stanzaId };
    if (facts.stanzaId === null) return null;
    const cursor = { id: facts.stanzaId, at };
    const nick = (facts.from ?? '').slice(room.length + 1);
    if (nick === account.nick) return cursor;
    // Who sent it, as the room asserts it, never as the message claims: live, the occupant under that nick
    // now; read back from the archive (the nick may have changed hands since), the room's occupant id as
    // its presence showed it. Unknown (a room that hides real JIDs, a sender who left before the bot saw
    // them): nobody's directive.
    const sender = archiveId === null ? occupants.byNick(facts.from ?? '') ?? null : await archivedSender(room, facts.occupantId);
    if (sender === null) {
      log.info({ room, message: facts.stanzaId, archived: archiveId !== null }, 'the sender of an xmpp room message is not known from the room\'s presence; it is not taken');
      return cursor;
    }
    if (sender === botJid) return cursor;
    if (facts.originId !== null && isConsoleOrigin(facts.originId)) bots.add(sender);
    if (bots.has(sender)) return cursor;
    const body = facts.body ?? '';
    if (body.trim() === '') return cursor;
    const thread = facts.thread === null || facts.thread === '' ? null : facts.thread;
    const addressed = addressedText(body, account.nick);
    // A new thread of the room, named by the message's stanza id: a repeat opens the same one.
    const opened = roomThreadAddress(room, facts.stanzaId);
    const address: Address = { channel, id: thread === null ? room : roomThreadAddress(room, thread) };
    const handled = await chat.message(
      { channel, address, opens: addressed === null ? null : { channel, id: opened }, sender, text: addressed ?? body, id: facts.stanzaId },
      // A reply to a message outside a thread goes to the thread it would open.
      { place: room, replyAt: thread === null ? opened : address.id },
    );
    // Claimed elsewhere and not done, perhaps by an instance that died: the cursor stays before it.
    if (handled.kind === 'held') throw new HeldElsewhere(facts.stanzaId);
    if (handled.kind === 'handled') log.info({ room, message: facts.stanzaId, outcome: handled.outcome }, 'xmpp room message handled');
    return cursor;
  }

  /** The sender of an archived message: its occupant id as presence named it, here or (remembered) before a restart. */
  async function archivedSender(room: string, occupantId: string | null): Promise<string | null> {
    if (occupantId === null) return null;
    const seen = occupants.byOccupantId(room, occupantId);
    return seen === undefined ? inbox.occupant(channel, room, occupantId) : seen;
  }

  /** Reads the room's archive after its cursor, each message through the same path; a room never read starts at its latest message. */
  async function readArchive(room: string): Promise<void> {
    const start = await inbox.cursor(channel, room);
    if (start === null) {
      const latest = (await archivePage(connection, room, { max: 1 })).messages.at(-1);
      await inbox.advance(channel, room, latest === undefined ? { id: '', at: new Date().toISOString() } : { id: latest.id, at: latest.at ?? new Date().toISOString() });
      return;
    }
    let after: string | null = start.id === '' ? null : start.id;
    for (let pages = 0; pages < CATCH_UP_PAGES; pages++) {
      const page = await archivePage(connection, room, after === null ? { max: PAGE, forward: true, start: new Date(start.at) } : { max: PAGE, after })
        .catch(async (error: unknown) => {
          // The cursor's message left the archive: read on from its time.
          if (after === null || !/item-not-found/.test(String((error as Error).message ?? error))) throw error;
          return archivePage(connection, room, { max: PAGE, forward: true, start: new Date(start.at) });
        });
      for (const archived of page.messages) {
        const cursor = await roomMessage(room, archived.message, archived.at ?? start.at, archived.id);
        await inbox.advance(channel, room, cursor ?? { id: archived.id, at: archived.at ?? start.at });
      }
      if (page.complete || page.last === null || page.messages.length === 0) return;
      after = page.last;
    }
  }

  function catchUp(room: string): Promise<void> {
    return enqueue(room, async () => {
      await readArchive(room);
      dirty.delete(room);
    });
  }

  async function direct(stanza: Element): Promise<void> {
    const from = stanza.attrs.from ?? '';
    const sender = bareJid(from);
    if (sender === null || sender === botJid || sender.endsWith(`@${account.muc.toLowerCase()}`) || sender === account.muc.toLowerCase()) return;
    const body = (stanza.getChildText('body') ?? '').trim();
    if (body === '') return;
    const id = stanza.getChildren('stanza-id', NS.sid).find((s) => bareJid(s.attrs.by) === botJid)?.attrs.id ?? stanza.attrs.id ?? null;
    const handled = await chat.direct({ channel, sender, text: body, id }, (reply) => connection.send(directMessage(from, randomUUID(), reply)));
    // Never the text: the code links an address until it is used or expires.
    if (handled === 'link') log.info({ from: sender }, 'xmpp link code received');
  }

  async function joinLiving(): Promise<void> {
    const rooms = new Set((await options.living()).flatMap(({ address }) => {
      const parsed = parseRoomThread(address);
      return parsed === null ? [] : [parsed.room];
    }));
    for (const room of rooms) void connection.join(room).catch(() => {});
  }
  const refreshLiving = () => {
    if (closed || !connection.online) return;
    void joinLiving().catch((error: unknown) => log.warn({ err: error }, 'the rooms where conversations live could not be read'));
  };

  const stops = [
    connection.listen((stanza) => {
      if (closed) return;
      if (!stanza.is('message') || stanza.getChild('result', NS.mam) !== undefined) return;
      const from = stanza.attrs.from ?? '';
      if (stanza.attrs.type === 'groupchat') {
        const room = from.split('/')[0]!;
        // History replayed on a join is the archive's to read (in order, from the cursor), not this.
        if (!from.includes('/') || stanza.getChild('delay', NS.delay) !== undefined || stanza.getChild('body') === undefined) return;
        if (connection.presenceIn(room) === null) return;
        const at = new Date().toISOString();
        void enqueue(room, async () => advance(room, await roomMessage(room, stanza, at)));
      } else if (stanza.attrs.type === 'chat') {
        void direct(stanza).catch((error: unknown) => log.warn({ err: error, from: bareJid(from) }, 'an xmpp direct message could not be answered'));
      }
    }),
    connection.onJoined((room) => {
      log.info({ room }, 'xmpp room joined; reading its archive from the cursor');
      void catchUp(room);
    }),
    connection.onOnline(refreshLiving),
    // Who the rooms said each occupant id is, kept past a restart: an archived message names its sender by it.
    occupants.onLearned((room, occupantId, jid) => {
      void inbox.rememberOccupant(channel, room, occupantId, jid)
        .catch((error: unknown) => log.warn({ err: error, room }, 'an xmpp occupant could not be remembered'));
    }),
  ];
  const every = setInterval(refreshLiving, LIVING_EVERY_MS);
  every.unref?.();
  refreshLiving();

  return {
    /** Reads a room's archive from its cursor now (after a failure, or in a test). */
    catchUp,
    /** Waits for the work queued on a room so far. */
    settled: (room: string): Promise<void> => chains.get(room) ?? Promise.resolve(),
    close(): void {
      closed = true;
      for (const stop of stops) stop();
      clearInterval(every);
      for (const timer of timers) clearTimeout(timer);
    },
  };
}

export type XmppInbound = ReturnType<typeof xmppInbound>;
