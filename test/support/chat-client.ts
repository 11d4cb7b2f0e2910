import { randomUUID } from 'node:crypto';
import { client, xml, type Client, type Element } from '@xmpp/client';
import { onSessionReady } from '../../adapters/xmpp/connection.ts';
import { xmlText } from '../../adapters/xmpp/stanzas.ts';
import type { PrivateProsody } from './private-prosody.ts';

const MUC = 'http://jabber.org/protocol/muc';
const SID = 'urn:xmpp:sid:0';

/** A groupchat message as a person in the room saw it. */
export interface SeenMessage {
  readonly room: string;
  readonly thread: string | null;
  readonly originId: string | null;
  readonly body: string | null;
  /** The room's stanza id of it (what a reply, XEP-0461, names it by). */
  readonly stanzaId: string | null;
}

/**
 * A person's XMPP client for tests: creates and configures rooms (as their owner), posts in them,
 * and records every groupchat message it sees live. It joins its rooms again after a reconnect (a
 * server restart), so it keeps seeing them.
 */
export class ChatClient {
  readonly seen: SeenMessage[] = [];
  /** Direct messages received: who from (bare JID) and what. */
  readonly direct: { readonly from: string; readonly body: string }[] = [];
  /** Each occupant's XEP-0421 id as the rooms' presence showed it, by `room/nick`. */
  readonly occupantIds = new Map<string, string>();
  readonly #client: Client;
  readonly #rooms = new Set<string>();
  readonly #nick: string;
  /** Resolves once the first session may send (see onSessionReady). */
  readonly #ready: Promise<void>;

  private constructor(xmpp: Client, nick: string) {
    this.#client = xmpp;
    this.#nick = nick;
    xmpp.on('error', () => {});
    let first = () => {};
    this.#ready = new Promise((resolve) => {
      first = resolve;
    });
    // Not on `online`: a join sent before stream management is enabled gets the session closed by the server
    // a moment later (adapters/xmpp/connection.ts, onSessionReady), out of the room it just joined.
    onSessionReady(xmpp, () => {
      first();
      for (const room of this.#rooms) void this.#client.send(this.#join(room)).catch(() => {});
    });
    xmpp.on('stanza', (stanza: Element) => {
      const occupantId = stanza.is('presence') ? stanza.getChild('occupant-id', 'urn:xmpp:occupant-id:0')?.attrs.id : undefined;
      if (occupantId !== undefined) this.occupantIds.set(stanza.attrs.from ?? '', occupantId);
      if (stanza.is('message') && stanza.attrs.type === 'chat' && stanza.getChild('body') !== undefined) {
        this.direct.push({ from: (stanza.attrs.from ?? '').split('/')[0]!, body: stanza.getChildText('body') ?? '' });
      }
      if (!stanza.is('message') || stanza.attrs.type !== 'groupchat' || stanza.getChild('body') === undefined) return;
      this.seen.push({
        room: (stanza.attrs.from ?? '').split('/')[0]!,
        thread: stanza.getChildText('thread'),
        originId: stanza.getChild('origin-id', SID)?.attrs.id ?? null,
        body: stanza.getChildText('body'),
        stanzaId: stanza.getChildren('stanza-id', SID).find((id) => id.attrs.by === (stanza.attrs.from ?? '').split('/')[0])?.attrs.id ?? null,
      });
    });
  }

  /** Signs `user` in; in rooms it goes by `nick` (its user name unless told). */
  static async connect(server: PrivateProsody, user: string, password: string, nick = user): Promise<ChatClient> {
    // A resource of its own: a session of the same person that failed to connect and retries in the
    // background must never take this one's place (Prosody closes the older session of a resource).
    const xmpp = client({ service: server.service, domain: server.domain, username: user, password, resource: `test-${randomUUID().slice(0, 8)}` });
    xmpp.reconnect.delay = 200;
    const chat = new ChatClient(xmpp, nick);
    try {
      await xmpp.start();
      await chat.#ready;
    } catch (error) {
      // A connection that failed is stopped, so it does not go on reconnecting in the background.
      await xmpp.stop().catch(() => {});
      throw error;
    }
    return chat;
  }

  #join(room: string): Element {
    return xml('presence', { to: `${room}/${this.#nick}` }, xml('x', { xmlns: MUC }, xml('history', { maxstanzas: '0' })));
  }

  /** Joins (creating it as its owner when new) and configures a room: public and persistent; `whois` anyone shows real JIDs to all. */
  async createRoom(room: string, config: { whois: 'anyone' | 'moderators'; moderated?: boolean; name?: string }): Promise<void> {
    const joined = new Promise<void>((resolve) => {
      const on = (stanza: Element) => {
        if (stanza.is('presence') && (stanza.attrs.from ?? '') === `${room}/${this.#nick}`) {
          this.#client.removeListener('stanza', on);
          resolve();
        }
      };
      this.#client.on('stanza', on);
    });
    this.#rooms.add(room);
    await this.#client.send(this.#join(room));
    await joined;
    const field = (name: string, value: string) => xml('field', { var: name }, xml('value', {}, value));
    await this.#client.iqCaller.request(
      xml('iq', { type: 'set', to: room }, xml('query', { xmlns: 'http://jabber.org/protocol/muc#owner' },
        xml('x', { xmlns: 'jabber:x:data', type: 'submit' },
          field('FORM_TYPE', 'http://jabber.org/protocol/muc#roomconfig'),
          field('muc#roomconfig_persistentroom', '1'),
          field('muc#roomconfig_publicroom', '1'),
          field('muc#roomconfig_whois', config.whois),
          field('muc#roomconfig_moderatedroom', config.moderated === true ? '1' : '0'),
          field('muc#roomconfig_roomname', config.name ?? ''),
        ))),
    );
  }

  /**
   * Posts in a room thread (in the room itself, without a thread, when `thread` is null), with an
   * origin-id when given. What XML cannot carry (NUL and the other C0 controls, lone surrogates) is sent as
   * U+FFFD, as a conforming client must: a raw NUL would end the client's own stream.
   */
  async post(room: string, thread: string | null, body: string, originId: string | null = null, extra: readonly Element[] = []): Promise<void> {
    await this.#client.send(xml('message', { to: room, type: 'groupchat' },
      xml('body', {}, xmlText(body)),
      thread === null ? null : xml('thread', {}, thread),
      originId === null ? null : xml('origin-id', { xmlns: SID, id: originId }),
      ...extra));
  }

  /** Sets an occupant's role or a JID's affiliation in a room this person administers (XEP-0045 muc#admin): a kick, a ban, a ban lifted. */
  async admin(room: string, item: { readonly jid?: string; readonly nick?: string; readonly role?: string; readonly affiliation?: string }): Promise<void> {
    await this.#client.iqCaller.request(xml('iq', { type: 'set', to: room }, xml('query', { xmlns: 'http://jabber.org/protocol/muc#admin' }, xml('item', { ...item }))));
  }

  /** Sends any stanza as this person's client sends it (a forger's extensions and all). */
  async sendRaw(stanza: Element): Promise<void> {
    await this.#client.send(stanza);
  }

  /** Joins a room someone else made (answers once the room took the join). */
  async joinRoom(room: string, extra: readonly Element[] = []): Promise<void> {
    const joined = new Promise<void>((resolve) => {
      const on = (stanza: Element) => {
        if (stanza.is('presence') && (stanza.attrs.from ?? '') === `${room}/${this.#nick}`) {
          this.#client.removeListener('stanza', on);
          resolve();
        }
      };
      this.#client.on('stanza', on);
    });
    this.#rooms.add(room);
    await this.#client.send(extra.length === 0 ? this.#join(room) : xml('presence', { to: `${room}/${this.#nick}` }, ...this.#join(room).children, ...extra));
    await joined;
  }

  /** Sends a direct message (type chat) to a bare JID. */
  async sendDirect(to: string, body: string): Promise<void> {
    await this.#client.send(xml('message', { to, type: 'chat', id: `dm-${Math.random().toString(36).slice(2)}` }, xml('body', {}, body)));
  }

  /** The messages seen so far with this origin-id. */
  withOrigin(originId: string): SeenMessage[] {
    return this.seen.filter((message) => message.originId === originId);
  }

  async close(): Promise<void> {
    this.#client.reconnect.stop();
    await Promise.race([this.#client.stop().catch(() => {}), new Promise((resolve) => setTimeout(resolve, 3_000))]);
  }
}
