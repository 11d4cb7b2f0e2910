import { randomUUID } from 'node:crypto';
import type { Element } from '@xmpp/client';
import { uuidv7 } from 'uuidv7';
import { addressedText, isConsoleOrigin } from '../../domain/chat-text.ts';
import type { Address } from '../../domain/model.ts';
import { parseRoomThread, roomThreadAddress } from '../../domain/xmpp.ts';
import type { ChatCursor } from '../../ports/chat-inbox.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import type { Logger } from '../../ports/logger.ts';
import { archivePage } from './archive.ts';
import { isSelfPresence, removedBy, type XmppConnection } from './connection.ts';
import { joinedNotice, roomInvitation, type RoomInvitation } from './invitations.ts';
import type { OccupantDirectory } from './occupants.ts';
import { barredReason } from './places.ts';
import { botPosts, repliedTo, replyText } from './replies.ts';
import { bareJid, directMessage as directStanza, messageFacts, NS, roomMessage as roomStanza } from './stanzas.ts';

/** Refusals of a join that will not change by themselves (RFC 6121 error conditions a MUC room answers a join with). */
const REFUSED_FOR_GOOD = new Set(['forbidden', 'registration-required', 'item-not-found', 'not-allowed']);

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
/** A reply to a post of the bot's not seen since the start is looked for in this many archive pages back, at most. */
const REPLIED_PAGES = 3;
export { addressedText };

/** The direct-message help of an xmpp bot. */
export function xmppHelp(nick: string): string {
  return 'I am the console bot. To link this address to your console user, ask the console for a link code (Chat links) ' +
    'and send me "link <code>" here. Invite me to a room to have me there (I come when a linked user invites me). ' +
    `In a room, start a message with my nick ("${nick}: ...") to start a conversation; write in its thread, or reply ` +
    'to one of its posts, to talk to it (where it is the only one in the room, a message in the room reaches it too).';
}

/** What a sender is told once per room when several conversations live there and their message named none. */
export function xmppHint(nick: string): string {
  return 'Several conversations live in this room. To talk to one, write in its thread or reply to one of its posts; ' +
    `"${nick}: ..." starts another. Nothing was run.`;
}

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
  const account = connection.account;
  const chat = handlers.session({ ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }), help: xmppHelp(account.nick), hint: xmppHint(account.nick) });
  /** Which thread each of the bot's posts went to: a reply to one (XEP-0461) goes there. */
  const posts = botPosts();
  /** Replied-to ids looked for in the archive and not found (bounded): not looked for again. */
  const notPosts = new Set<string>();
  /** Invitations, one at a time, in order. */
  let invitations: Promise<void> = Promise.resolve();
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
      const what = room === botJid ? 'an xmpp direct message' : 'an xmpp room message';
      if (error instanceof HeldElsewhere) log.info({ room, message: error.message }, `${what} is claimed and not done yet; the archive is read again`);
      else log.warn({ err: error, room }, `${what} could not be handled; the archive is read again`);
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
    if (nick === account.nick) {
      // The bot's own post: a reply to it (by the room's stanza id, or its origin-id) goes to its thread.
      if (facts.thread !== null && facts.thread !== '') posts.record(room, [facts.stanzaId, facts.originId], facts.thread);
      return cursor;
    }
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
    // A new thread of the room, named by the message's stanza id: a repeat opens the same one.
    const opened = roomThreadAddress(room, facts.stanzaId);
    let routed: Routed;
    if (thread === null) routed = await outsideThread(room, message, body, opened);
    else {
      const addressed = addressedText(body, account.nick);
      const at = roomThreadAddress(room, thread);
      routed = { address: { channel, id: at }, opens: addressed === null ? null : { channel, id: opened }, text: addressed ?? body, replyAt: at, reached: null };
    }
    const handled = await chat.message(
      { channel, address: routed.address, opens: routed.opens, sender, text: routed.text, id: facts.stanzaId, ...(routed.reached === null ? {} : { reached: routed.reached }) },
      { place: room, replyAt: routed.replyAt },
    );
    // Claimed elsewhere and not done, perhaps by an instance that died: the cursor stays before it.
    if (handled.kind === 'held') throw new HeldElsewhere(facts.stanzaId);
    if (handled.kind === 'handled') log.info({ room, message: facts.stanzaId, outcome: handled.outcome }, 'xmpp room message handled');
    return cursor;
  }

  /** Where a room message goes, what of it is the text, and where a reply to it goes. */
  interface Routed {
    readonly address: Address;
    readonly opens: Address | null;
    readonly text: string;
    readonly replyAt: string;
    readonly reached: 'sole' | 'ambiguous' | null;
  }

  /**
   * A room message outside any thread (most clients barely show threads, so people answer in the room): a reply
   * (XEP-0461) to one of the bot's posts goes to the conversation living in that post's thread; a message
   * addressing the bot (`nick: …`) starts a new conversation (contract section 9); a plain message goes to the
   * room's sole conversation (a linked member's: core decides). Several conversations and nothing naming one: `ambiguous`.
   * Anything else lands on the room itself, where no conversation lives: nothing runs.
   */
  async function outsideThread(room: string, message: Element, body: string, opened: string): Promise<Routed> {
    const text = replyText(message, body);
    const addressed = addressedText(text, account.nick);
    const said = addressed ?? text;
    const here = await conversationsIn(room);
    const replied = repliedTo(message);
    // A reply that names its author names the bot by its nick, or it is someone else's post.
    const post = replied === null || (replied.to !== null && replied.to !== `${room}/${account.nick}`) ? undefined : await postThread(room, replied.id);
    if (post !== undefined && here.includes(roomThreadAddress(room, post))) {
      const at = roomThreadAddress(room, post);
      return { address: { channel, id: at }, opens: null, text: said, replyAt: at, reached: null };
    }
    const onRoom = { channel, id: room };
    // Addressing the bot by nick outside a thread starts a new conversation (contract section 9), wherever others live.
    if (addressed !== null) return { address: onRoom, opens: { channel, id: opened }, text: addressed, replyAt: opened, reached: null };
    if (here.length === 1) return { address: { channel, id: here[0]! }, opens: null, text: said, replyAt: here[0]!, reached: 'sole' };
    return { address: onRoom, opens: null, text: said, replyAt: opened, reached: here.length > 1 ? 'ambiguous' : null };
  }

  /** The addresses of the conversations living in `room`. */
  async function conversationsIn(room: string): Promise<string[]> {
    const lower = room.toLowerCase();
    return (await options.living()).flatMap(({ address }) => (parseRoomThread(address)?.room.toLowerCase() === lower ? [address] : []));
  }

  /**
   * The thread of the bot's post a reply names: remembered from its echo, else looked for in the room's latest
   * archive pages (a post from before a restart), at most {@link REPLIED_PAGES} of them; undefined when it is none.
   */
  async function postThread(room: string, id: string): Promise<string | undefined> {
    const known = posts.threadOf(room, id);
    const missing = `${room} ${id}`;
    if (known !== undefined || notPosts.has(missing)) return known;
    let before = '';
    for (let pages = 0; pages < REPLIED_PAGES; pages++) {
      const page = await archivePage(connection, room, { max: PAGE, before });
      for (const archived of page.messages) {
        if ((archived.from ?? '').slice(room.length + 1) !== account.nick || archived.thread === null || archived.thread === '') continue;
        posts.record(room, [archived.id, archived.originId], archived.thread);
      }
      const found = posts.threadOf(room, id);
      if (found !== undefined) return found;
      if (page.complete || page.first === null || page.messages.length === 0) break;
      before = page.first;
    }
    notPosts.add(missing);
    if (notPosts.size > 1_000) notPosts.delete(notPosts.values().next().value!);
    return undefined;
  }

  /**
   * An invitation to a room (mediated or direct), the inviter as the server asserts it: a linked inviter's room is
   * served from now on (kept, joined again after a restart), joined, and told so; anyone else is told why not.
   */
  async function invited(invitation: RoomInvitation): Promise<void> {
    const { room, inviter } = invitation;
    const handled = await chat.invited({ channel, place: room, sender: inviter, id: invitation.id }, {
      accept: async (fresh) => {
        const presence = await connection.join(room);
        if (presence.refused !== null) throw new Error(`the bot cannot join ${room} (${presence.refused})`);
        // The room sent its occupants' presence before the bot's own: the inviter's nick is known if they are there.
        const barred = barredReason({ jid: room, name: room, features: new Set() }, presence);
        const notice = joinedNotice(occupants.nickOf(room, inviter) ?? null, account.nick, barred);
        if (fresh && presence.role !== 'visitor' && presence.role !== 'none') await connection.send(roomStanza(room, uuidv7(), notice));
      },
      decline: (reply) => connection.send(directStanza(invitation.replyTo, randomUUID(), reply)),
    });
    log.info({ room, from: inviter, kind: invitation.kind, outcome: handled }, 'xmpp invitation handled');
  }

  /** Takes an invitation (any other stanza is left alone): handled one at a time, in order. */
  function take(stanza: Element): void {
    const invitation = roomInvitation(stanza, account.muc, botJid);
    if (invitation === null) return;
    log.info({ room: invitation.room, from: invitation.inviter, kind: invitation.kind }, 'xmpp invitation received');
    invitations = invitations.then(() => invited(invitation)).catch((error: unknown) => {
      if (!closed) log.warn({ err: error, room: invitation.room }, 'an xmpp invitation could not be handled');
    });
  }

  /** The sender of an archived message: its occupant id as presence named it, here or (remembered) before a restart. */
  async function archivedSender(room: string, occupantId: string | null): Promise<string | null> {
    if (occupantId === null) return null;
    const seen = occupants.byOccupantId(room, occupantId);
    return seen === undefined ? inbox.occupant(channel, room, occupantId) : seen;
  }

  /**
   * Reads the room's archive after its cursor, each message through the same path; a room never read starts at
   * its latest message. The bot's own archive (`room` its bare JID: direct messages) is read the same way.
   */
  async function readArchive(room: string): Promise<void> {
    const handle = room === botJid
      ? (message: Element, at: string, id: string) => directMessage(message, at, id)
      : (message: Element, at: string, id: string) => roomMessage(room, message, at, id);
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
        const cursor = await handle(archived.message, archived.at ?? start.at, archived.id);
        await inbox.advance(channel, room, cursor ?? { id: archived.id, at: archived.at ?? start.at });
      }
      if (page.complete || page.last === null || page.messages.length === 0) return;
      after = page.last;
    }
  }

  /** Whether the server keeps the bot's own archive (direct messages): told otherwise once, it is not read again. */
  let ownArchive = true;

  function catchUp(room: string): Promise<void> {
    return enqueue(room, async () => {
      if (room === botJid && !ownArchive) return void dirty.delete(room);
      try {
        await readArchive(room);
      } catch (error) {
        // A server without an archive for accounts: direct messages are answered live only (as before issue 41).
        if (room !== botJid || !/feature-not-implemented|service-unavailable|not-allowed|forbidden/.test(String((error as Error).message ?? error))) throw error;
        ownArchive = false;
        log.warn({ err: error }, 'the xmpp server keeps no archive of the bot\'s direct messages; one left half answered by an instance that died is not read again');
      }
      dirty.delete(room);
    });
  }

  /**
   * A direct message to the bot, live or read back from the bot's own archive (XEP-0313 on its account, under
   * `archiveId`); answers the cursor it leaves the bot's archive at (its archive id: the `stanza-id` the server
   * stamped by the bot's JID), or null when the server archives none. Claimed by that id: a message claimed by
   * a listener that died mid-way (kill -9 with a `link <code>` in hand) answers `held`, keeps the cursor before it,
   * and is read again from the archive until it is done, or its claim lapses and this listener answers it.
   */
  async function directMessage(stanza: Element, at: string, archiveId: string | null = null): Promise<ChatCursor | null> {
    // The archive's id of a message is the stanza-id the server stamped it with live: one claim, read either way.
    const stamped = archiveId ?? stanza.getChildren('stanza-id', NS.sid).find((s) => bareJid(s.attrs.by) === botJid)?.attrs.id ?? null;
    const cursor = stamped === null ? null : { id: stamped, at };
    // The bot's archive holds what it sent too, and what is not a person's chat message.
    if (stanza.attrs.type !== 'chat') return cursor;
    const from = stanza.attrs.from ?? '';
    const sender = bareJid(from);
    if (sender === null || sender === botJid || sender.endsWith(`@${account.muc.toLowerCase()}`) || sender === account.muc.toLowerCase()) return cursor;
    const body = (stanza.getChildText('body') ?? '').trim();
    if (body === '') return cursor;
    const id = stamped ?? stanza.attrs.id ?? null;
    const handled = await chat.direct({ channel, sender, text: body, id }, (reply) => connection.send(directStanza(from, randomUUID(), reply)));
    if (handled === 'held') throw new HeldElsewhere(id ?? '');
    // Never the text: the code links an address until it is used or expires.
    if (handled === 'link') log.info({ from: sender }, 'xmpp link code received');
    return cursor;
  }

  /** Joins the rooms where conversations live, and those the bot serves at an invitation. */
  async function joinLiving(): Promise<void> {
    const rooms = new Set((await options.living()).flatMap(({ address }) => {
      const parsed = parseRoomThread(address);
      return parsed === null ? [] : [parsed.room];
    }));
    const served = new Set(await inbox.served(channel));
    for (const room of served) rooms.add(room);
    for (const room of rooms) {
      void connection.join(room).then((presence) => {
        // A room served at an invitation that refuses the bot for good (banned, members only, gone): served no more.
        if (served.has(room) && presence.refused !== null && REFUSED_FOR_GOOD.has(presence.refused)) void leftRoom(room, `refused: ${presence.refused}`);
      }, () => {});
    }
  }

  /** A room the bot served at an invitation that kicked, banned or refuses it: served no more, and said in the log. */
  async function leftRoom(room: string, why: string): Promise<void> {
    const unserved = await inbox.unserve(channel, room).catch((error: unknown) => {
      log.warn({ err: error, room }, 'a room that removed the bot could not be taken off the rooms it serves');
      return false;
    });
    if (unserved) log.warn({ room, why }, 'the bot no longer serves an xmpp room that removed it; an invitation brings it back');
  }
  const refreshLiving = () => {
    if (closed || !connection.online) return;
    void joinLiving().catch((error: unknown) => log.warn({ err: error }, 'the rooms where conversations live could not be read'));
  };

  const stops = [
    connection.listen((stanza) => {
      if (closed) return;
      if (stanza.is('presence') && stanza.attrs.type === 'unavailable') {
        const room = (stanza.attrs.from ?? '').split('/')[0]!;
        const removed = removedBy(stanza);
        // Only a room of the channel's MUC service speaks for the bot's place in it (a person's presence is stamped with their own JID).
        const ofService = room.toLowerCase().endsWith(`@${account.muc.toLowerCase()}`);
        if (removed !== null && ofService && isSelfPresence(stanza, room, account.nick)) void leftRoom(room, removed);
        return;
      }
      if (!stanza.is('message') || stanza.getChild('result', NS.mam) !== undefined) return;
      const from = stanza.attrs.from ?? '';
      if (stanza.attrs.type === 'groupchat') {
        const room = from.split('/')[0]!;
        // History replayed on a join is the archive's to read (in order, from the cursor), not this.
        if (!from.includes('/') || stanza.getChild('delay', NS.delay) !== undefined || stanza.getChild('body') === undefined) return;
        if (connection.presenceIn(room) === null) return;
        const at = new Date().toISOString();
        void enqueue(room, async () => advance(room, await roomMessage(room, stanza, at)));
      } else if (stanza.attrs.type === 'chat' && roomInvitation(stanza, account.muc, botJid) === null) {
        // One at a time, in order, with the reads of the bot's archive: a failed or held one is read again from there.
        const at = new Date().toISOString();
        void enqueue(botJid, async () => advance(botJid, await directMessage(stanza, at)));
      } else take(stanza);
    }),
    connection.onJoined((room) => {
      log.info({ room }, 'xmpp room joined; reading its archive from the cursor');
      void catchUp(room);
    }),
    connection.onOnline(refreshLiving),
    // Direct messages sent while the bot was away, or left half answered by an instance that died: read from its archive.
    connection.onOnline(() => void catchUp(botJid)),
    // Who the rooms said each occupant id is, kept past a restart: an archived message names its sender by it.
    occupants.onLearned((room, occupantId, jid) => {
      void inbox.rememberOccupant(channel, room, occupantId, jid)
        .catch((error: unknown) => log.warn({ err: error, room }, 'an xmpp occupant could not be remembered'));
    }),
  ];
  const every = setInterval(refreshLiving, LIVING_EVERY_MS);
  every.unref?.();
  refreshLiving();
  if (connection.online) void catchUp(botJid);

  return {
    /** Reads a room's archive from its cursor now (after a failure, or in a test). */
    catchUp,
    /** Handles an invitation that came before this listener (the channel kept it). */
    take,
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
