import type { Element } from '@xmpp/client';
import type { XmppConnection } from './connection.ts';
import { bareJid, NS } from './stanzas.ts';

/**
 * Who the occupants of the bot's rooms are, as the rooms themselves assert it: the real bare JID of
 * each `room/nick` present now, and of each XEP-0421 occupant id the room has stamped on a presence.
 * Nothing a message carries of itself (its own `muc#user` item, its own occupant id) is ever taken
 * for a sender: a room passes a client's extensions through (Prosody 0.12 does), so they are the
 * sender's claim, not the room's.
 */
export interface OccupantDirectory {
  /** The real bare JID of the occupant now in `room` under this nick (`from` is `room/nick`). */
  byNick(from: string): string | undefined;
  /**
   * The real bare JID behind the room's occupant id: stable for a person in a room (the room derives
   * it from their bare JID), so it names the sender of an archived message even after their nick
   * changed hands. An id the room has shown for two JIDs names nobody (null); one never shown, undefined.
   */
  byOccupantId(room: string, occupantId: string): string | null | undefined;
  /**
   * Calls `learned` with each (room, occupant id, JID) the rooms have asserted, those known now and
   * those to come (to be remembered past a restart); answers how to stop.
   */
  onLearned(learned: (room: string, occupantId: string, jid: string) => void): () => void;
  /** The nick under which `jid` (a bare JID) is in `room` now, or undefined (not there, or the room hides it from the bot). */
  nickOf(room: string, jid: string): string | undefined;
  /** How many occupants (nicks, occupant ids) it holds now: bounded by {@link OCCUPANTS_MAX} each. */
  size(): { readonly nicks: number; readonly ids: number };
  /** Stops listening to presence. */
  stop(): void;
}

/**
 * The most nicks, and the most occupant ids, held at once: past it the oldest go. A forgotten id is still
 * known to the inbound side from the chat inbox, where each was remembered as it was learned.
 */
export const OCCUPANTS_MAX = 10_000;

/** An id seen for two different JIDs: never trusted again. */
const AMBIGUOUS = '\u0000ambiguous';

/**
 * What one presence from a room says of an occupant, or null when it is no room's occupant presence
 * the bot can trust: its `from` must be `room@<the MUC service>/nick`, and it must hold exactly one
 * `muc#user` item (the room's own; Prosody strips a joiner's before it adds its own, and two are
 * taken for a forgery rather than guessed between).
 */
export function occupantPresence(stanza: Element, mucService: string): { from: string; room: string; jid: string | null; occupantId: string | null; gone: boolean } | null {
  if (!stanza.is('presence')) return null;
  const from = stanza.attrs.from ?? '';
  const slash = from.indexOf('/');
  if (slash < 0) return null;
  const room = from.slice(0, slash);
  const at = room.indexOf('@');
  if (at < 1 || room.slice(at + 1).toLowerCase() !== mucService.toLowerCase()) return null;
  const gone = stanza.attrs.type === 'unavailable';
  const items = stanza.getChildren('x', NS.mucUser).flatMap((x) => x.getChildren('item'));
  const ids = stanza.getChildren('occupant-id', NS.occupantId);
  return {
    from, room, gone,
    jid: items.length === 1 ? bareJid(items[0]!.attrs.jid ?? null) : null,
    occupantId: ids.length === 1 ? ids[0]!.attrs.id ?? null : null,
  };
}

/**
 * Remembers each occupant from the presence the rooms send the bot (on its join, and as people come
 * and go). It listens from when the connection is made, not from when the channel listens: a room
 * joined before (for a delivery) sends its occupants' presence once, on the join, and a live message
 * there names its sender by nick only. A nick is forgotten when its occupant leaves (another person
 * may take it), and so is their occupant id (the listeners were told it as it was learned, and keep it:
 * the chat inbox); an id seen for two JIDs is kept while the room is, so it never names anyone again here.
 * When the bot leaves a room (its own unavailable presence), all of that room goes. At most
 * {@link OCCUPANTS_MAX} of each are held: the oldest go first.
 */
export function occupantDirectory(connection: Pick<XmppConnection, 'listen' | 'account'>, max: number = OCCUPANTS_MAX): OccupantDirectory {
  const nicks = new Map<string, string>();
  const ids = new Map<string, string>();
  /** Every (room, id, JID) asserted and held, for listeners that come later, by `room id`. */
  const asserted = new Map<string, { room: string; occupantId: string; jid: string }>();
  const listeners = new Set<(room: string, occupantId: string, jid: string) => void>();
  /** Sets `key` as the newest entry of `map`, the oldest going past the bound. */
  const hold = <T>(map: Map<string, T>, key: string, value: T) => {
    map.delete(key);
    map.set(key, value);
    while (map.size > max) map.delete(map.keys().next().value!);
  };
  const forgetRoom = (room: string) => {
    for (const map of [nicks, ids, asserted] as Map<string, unknown>[]) {
      for (const key of [...map.keys()]) if (key.startsWith(`${room}/`) || key.startsWith(`${room} `)) map.delete(key);
    }
  };
  const stop = connection.listen((stanza) => {
    const presence = occupantPresence(stanza, connection.account.muc);
    if (presence === null) return;
    if (presence.gone && presence.from === `${presence.room}/${connection.account.nick}`) return forgetRoom(presence.room);
    if (presence.gone || presence.jid === null) {
      nicks.delete(presence.from);
      if (presence.gone && presence.occupantId !== null) {
        const key = `${presence.room} ${presence.occupantId}`;
        if (ids.get(key) !== AMBIGUOUS) ids.delete(key);
        asserted.delete(key);
      }
      return;
    }
    hold(nicks, presence.from, presence.jid);
    if (presence.occupantId === null) return;
    const key = `${presence.room} ${presence.occupantId}`;
    const known = ids.get(key);
    hold(ids, key, known === undefined || known === presence.jid ? presence.jid : AMBIGUOUS);
    if (asserted.get(key)?.jid === presence.jid) return;
    const learned = { room: presence.room, occupantId: presence.occupantId, jid: presence.jid };
    hold(asserted, key, learned);
    for (const listener of listeners) listener(learned.room, learned.occupantId, learned.jid);
  });
  return {
    size: () => ({ nicks: nicks.size, ids: ids.size }),
    byNick: (from) => nicks.get(from),
    nickOf(room, jid) {
      for (const [from, held] of nicks) if (held === jid && from.startsWith(`${room}/`)) return from.slice(room.length + 1);
      return undefined;
    },
    byOccupantId: (room, occupantId) => {
      const jid = ids.get(`${room} ${occupantId}`);
      return jid === AMBIGUOUS ? null : jid;
    },
    onLearned(learned) {
      for (const { room, occupantId, jid } of asserted.values()) learned(room, occupantId, jid);
      listeners.add(learned);
      return () => listeners.delete(learned);
    },
    stop,
  };
}
