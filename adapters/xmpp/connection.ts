import { randomBytes } from 'node:crypto';
import { client as xmppClient, type Client, type Element } from '@xmpp/client';
import type { Logger } from '../../ports/logger.ts';
import { ChannelUnavailableError } from '../../ports/channel-port.ts';
import type { XmppAccount } from '../../domain/xmpp.ts';
import { availablePresence, joinPresence, NS } from './stanzas.ts';

/** How the bot's connection waits between attempts: from `firstMs`, doubling up to `maxMs`. */
export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

export const XMPP_BACKOFF: Backoff = Object.freeze({ firstMs: 1_000, maxMs: 30_000 });

const NS_STREAMS = 'http://etherx.jabber.org/streams';
const NS_SM = 'urn:xmpp:sm:3';
/** How long a new session waits for the answer to `<enable/>` before it is used anyway. */
const SM_ANSWER_MS = 10_000;

/**
 * Calls `ready` each time a new session of `client` is up and may send: once stream management (XEP-0198)
 * is enabled, or refused, or was not offered. xmpp.js 0.14 emits `online` when the resource is bound, before
 * it asks for stream management, and it zeroes its count of the stanzas it received only once the server's
 * `<enabled/>` is handled, a few ticks after it is read: what the server sent right after `<enabled/>` (the
 * answers to a join sent on `online`) is counted, then forgotten, and the next ack tells the server fewer
 * stanzas than an earlier one (or more than it sent). Prosody ends such a stream ("Client acknowledged less
 * stanzas than already acknowledged"), and the session is gone a moment after it came up, out of the rooms
 * it just joined. Sent nothing before `<enabled/>`, the server sends nothing either, and the count holds.
 * A resumed session (no `online`) had stream management enabled before it resumed.
 */
export function onSessionReady(client: Client, ready: () => void): void {
  /** Whether the stream's last features offered stream management (those after authentication do). */
  let offered = false;
  /** Online, waiting for the answer to `<enable/>`. */
  let waiting = false;
  const settled = () => {
    waiting = false;
    // After the ticks in which xmpp.js handles the answer (and zeroes its count).
    setImmediate(() => {
      if (client.status === 'online') ready();
    });
  };
  client.on('nonza', (element: Element) => {
    if (element.is('features', NS_STREAMS)) offered = element.getChild('sm', NS_SM) !== undefined;
    else if (waiting && (element.is('enabled', NS_SM) || element.is('failed', NS_SM))) settled();
  });
  let sessions = 0;
  client.on('online', () => {
    if (!offered) return settled();
    waiting = true;
    // A server that never answers `<enable/>`: the session is used anyway, as it was before the wait.
    const session = ++sessions;
    setTimeout(() => {
      if (waiting && session === sessions) settled();
    }, SM_ANSWER_MS).unref?.();
  });
  client.on('disconnect', () => {
    waiting = false;
  });
}

/** What the bot is in a room it joined: whether it may post, and whether it sees occupants' real JIDs. */
export interface RoomPresence {
  readonly role: string;
  readonly affiliation: string;
  /** The room shows real JIDs to every occupant (status 100), or the bot is a moderator (who sees them anyway). */
  readonly seesRealJids: boolean;
  /** Why the bot is not in the room (the room's error condition), or null when it is. */
  readonly refused: string | null;
}

/**
 * The bot's one connection to its server: SCRAM login, stream management (resumed sessions keep the
 * rooms), reconnection with a growing wait, and the rooms it was asked to be in, joined again on
 * each new session. Its password is held here and nowhere else; nothing of it is logged.
 */
export class XmppConnection {
  readonly #client: Client;
  readonly #log: Logger;
  readonly #account: XmppAccount;
  readonly #backoff: Backoff;
  readonly #rooms = new Map<string, Promise<RoomPresence>>();
  readonly #listeners = new Set<(stanza: Element) => void>();
  readonly #joining = new Map<string, (presence: RoomPresence) => void>();
  readonly #joinedListeners = new Set<(room: string) => void>();
  readonly #onlineListeners = new Set<() => void>();
  #closed = false;
  /** The session is up and may send (see onSessionReady); false from a disconnect until the next one is. */
  #ready = false;
  #wait: number;
  #retry: ReturnType<typeof setTimeout> | null = null;

  constructor(options: { account: XmppAccount; password: string; log: Logger; backoff?: Backoff }) {
    const { account } = options;
    this.#account = account;
    this.#log = options.log;
    this.#backoff = options.backoff ?? XMPP_BACKOFF;
    this.#wait = this.#backoff.firstMs;
    const [username] = account.jid.split('@');
    this.#client = xmppClient({
      service: account.service,
      domain: account.domain,
      username: username!,
      password: options.password,
      // One resource per connection: two instances of the service are two sessions of the bot.
      resource: `console-${randomBytes(4).toString('hex')}`,
      timeout: 10_000,
    });
    const c = this.#client;
    c.reconnect.delay = this.#wait;
    c.on('error', (error: Error) => {
      this.#log.warn({ err: { type: error.name, message: error.message }, xmpp: account.jid }, 'xmpp connection error');
      // A reconnection that failed (the server still away) is tried again, a little later each time.
      if (!this.#closed && (c.status === 'disconnect' || c.status === 'offline')) this.#again();
    });
    // A new session is used once it may send (see onSessionReady): until then the bot is not online.
    onSessionReady(c, () => {
      this.#ready = true;
      this.#wait = this.#backoff.firstMs;
      c.reconnect.delay = this.#wait;
      this.#log.info({ xmpp: account.jid }, 'xmpp connection online');
      // Available: the server routes direct messages (link codes) to this session, and what waited offline.
      void c.send(availablePresence()).catch(() => {});
      // A new session: the server forgot the bot's rooms; a resumed one (stream management) did not.
      for (const room of [...this.#rooms.keys()]) {
        this.#rooms.delete(room);
        void this.join(room).catch(() => {});
      }
      for (const listener of this.#onlineListeners) this.#safely(() => listener());
    });
    c.streamManagement.on('resumed', () => {
      this.#ready = true;
      this.#wait = this.#backoff.firstMs;
      c.reconnect.delay = this.#wait;
      this.#log.info({ xmpp: account.jid }, 'xmpp session resumed');
    });
    c.on('disconnect', () => {
      this.#ready = false;
      if (!this.#closed) this.#log.warn({ xmpp: account.jid, retryInMs: c.reconnect.delay }, 'xmpp connection lost; reconnecting');
    });
    c.on('stanza', (stanza: Element) => this.#stanza(stanza));
  }

  /** Starts connecting; never rejects (a server that is away is tried again with the backoff). */
  start(): void {
    void this.#client.start().catch(() => this.#again());
  }

  get online(): boolean {
    return !this.#closed && this.#ready && this.#client.status === 'online';
  }

  /** The bot's bare JID. */
  get jid(): string {
    return this.#account.jid;
  }

  get account(): XmppAccount {
    return this.#account;
  }

  /** Throws ChannelUnavailableError unless the session is up. */
  ensureOnline(): void {
    if (!this.online) throw new ChannelUnavailableError(`the XMPP server of ${this.#account.jid} is not reachable now`);
  }

  /** An IQ request and its answer (an error answer rejects). */
  async request(stanza: Element, timeoutMs = 10_000): Promise<Element> {
    this.ensureOnline();
    try {
      return await this.#client.iqCaller.request(stanza, timeoutMs);
    } catch (error) {
      if (!this.online) throw new ChannelUnavailableError(`the XMPP server of ${this.#account.jid} went away`, { cause: error });
      throw error;
    }
  }

  async send(stanza: Element): Promise<void> {
    this.ensureOnline();
    await this.#client.send(stanza);
  }

  /** Calls `listener` with every stanza received until the returned function is called. */
  listen(listener: (stanza: Element) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Calls `listener` with each room the bot is in once it joined it (again on each new session). */
  onJoined(listener: (room: string) => void): () => void {
    this.#joinedListeners.add(listener);
    return () => this.#joinedListeners.delete(listener);
  }

  /** Calls `listener` each time a new session is up (not when one is resumed: nothing was missed then). */
  onOnline(listener: () => void): () => void {
    this.#onlineListeners.add(listener);
    return () => this.#onlineListeners.delete(listener);
  }

  /** The rooms the bot was asked to be in. */
  rooms(): string[] {
    return [...this.#rooms.keys()];
  }

  /** The bot's presence in a room it was asked to be in, or null when it was not asked (nothing waits). */
  presenceIn(room: string): Promise<RoomPresence> | null {
    return this.#rooms.get(room) ?? null;
  }

  /** Joins a room (once; again on each new session) and answers the bot's presence there. */
  join(room: string, timeoutMs = 10_000): Promise<RoomPresence> {
    const known = this.#rooms.get(room);
    if (known !== undefined) return known;
    const joined = new Promise<RoomPresence>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#joining.delete(room);
        reject(new Error(`no answer from ${room} to the bot's join`));
      }, timeoutMs);
      this.#joining.set(room, (presence) => {
        clearTimeout(timer);
        this.#joining.delete(room);
        resolve(presence);
      });
      this.send(joinPresence(room, this.#account.nick)).catch((error: unknown) => {
        clearTimeout(timer);
        this.#joining.delete(room);
        reject(error);
      });
    });
    this.#rooms.set(room, joined);
    joined.then((presence) => {
      if (presence.refused !== null || this.#rooms.get(room) !== joined) return;
      for (const listener of this.#joinedListeners) this.#safely(() => listener(room));
    }, () => {});
    // A join that failed is asked again next time; a refusal (an error presence) is an answer and stays.
    joined.catch(() => {
      if (this.#rooms.get(room) === joined) this.#rooms.delete(room);
    });
    return joined;
  }

  /** Stops reconnecting and closes the session (bounded). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#retry !== null) clearTimeout(this.#retry);
    this.#client.reconnect.stop();
    await Promise.race([this.#client.stop().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 3_000).unref())]);
  }

  #again(): void {
    if (this.#closed || this.#retry !== null) return;
    const wait = this.#wait;
    this.#wait = Math.min(this.#wait * 2, this.#backoff.maxMs);
    this.#client.reconnect.delay = this.#wait;
    this.#retry = setTimeout(() => {
      this.#retry = null;
      if (this.#closed) return;
      const c = this.#client;
      const attempt = c.status === 'offline' ? c.start() : c.reconnect.reconnect();
      void attempt.catch(() => this.#again());
    }, wait);
    this.#retry.unref?.();
  }

  #stanza(stanza: Element): void {
    if (stanza.is('presence')) this.#roomPresence(stanza);
    for (const listener of this.#listeners) this.#safely(() => listener(stanza));
  }

  #safely(call: () => void): void {
    try {
      call();
    } catch (error) {
      this.#log.warn({ err: error }, 'an xmpp listener failed');
    }
  }

  /** The answer to the bot's own join: its self-presence (status 110), or an error presence from the room. */
  #roomPresence(stanza: Element): void {
    const from = stanza.attrs.from ?? '';
    const slash = from.indexOf('/');
    const room = slash < 0 ? from : from.slice(0, slash);
    // The bot left the room, or was kicked or banned from it: not in it any more, so a later join is a join again (a
    // nick change, status 303, is an unavailable presence of its own too, and leaves nothing).
    const left = stanza.attrs.type === 'unavailable' && isSelfPresence(stanza, room, this.#account.nick) && !hasStatus(stanza, '303');
    const waiting = this.#joining.get(room);
    if (left && waiting === undefined) {
      this.#rooms.delete(room);
      return;
    }
    if (waiting === undefined) return;
    // Removed while its join was answered (kicked or banned at once): a refusal, never a join.
    if (left) {
      waiting({ role: 'none', affiliation: 'none', seesRealJids: false, refused: removedBy(stanza) ?? 'left' });
      return;
    }
    if (stanza.attrs.type === 'error') {
      const condition = stanza.getChild('error')?.getChildElements()[0]?.name ?? 'refused';
      waiting({ role: 'none', affiliation: 'none', seesRealJids: false, refused: condition });
      return;
    }
    const x = stanza.getChild('x', NS.mucUser);
    const codes = new Set(x?.getChildren('status').map((s) => s.attrs.code) ?? []);
    if (!codes.has('110')) return;
    const item = x?.getChild('item');
    const role = item?.attrs.role ?? 'none';
    waiting({ role, affiliation: item?.attrs.affiliation ?? 'none', seesRealJids: codes.has('100') || role === 'moderator', refused: null });
  }
}

/** Whether a room's presence is the bot's own (status 110, or its nick in the room). */
export function isSelfPresence(stanza: Element, room: string, nick: string): boolean {
  if (stanza.attrs.from === `${room}/${nick}`) return true;
  return stanza.getChildren('x', NS.mucUser).some((x) => x.getChildren('status').some((status) => status.attrs.code === '110'));
}

/** Whether a presence carries the MUC status `code`. */
const hasStatus = (stanza: Element, code: string): boolean =>
  stanza.getChildren('x', NS.mucUser).some((x) => x.getChildren('status').some((status) => status.attrs.code === code));

/** Why the bot left a room, from its own unavailable presence: `kicked` (status 307), `banned` (301), else null. */
export function removedBy(stanza: Element): 'kicked' | 'banned' | null {
  const codes = new Set(stanza.getChildren('x', NS.mucUser).flatMap((x) => x.getChildren('status').map((status) => status.attrs.code)));
  return codes.has('301') ? 'banned' : codes.has('307') ? 'kicked' : null;
}
