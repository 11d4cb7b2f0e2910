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
  /** Stops listening to presence. */
  stop(): void;
}

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
 * may take it); an occupant id is kept (it is the same person's in that room for as long as the room lives).
 */
export function occupantDirectory(connection: XmppConnection): OccupantDirectory {
  const nicks = new Map<string, string>();
  const ids = new Map<string, string>();
  /** Every (room, id, JID) asserted so far, for listeners that come later. */
  const asserted = new Map<string, { room: string; occupantId: string; jid: string }>();
  const listeners = new Set<(room: string, occupantId: string, jid: string) => void>();
  const stop = connection.listen((stanza) => {
    const presence = occupantPresence(stanza, connection.account.muc);
    if (presence === null) return;
    if (presence.gone || presence.jid === null) {
      nicks.delete(presence.from);
      return;
    }
    nicks.set(presence.from, presence.jid);
    if (presence.occupantId === null) return;
    const key = `${presence.room} ${presence.occupantId}`;
    const known = ids.get(key);
    ids.set(key, known === undefined || known === presence.jid ? presence.jid : AMBIGUOUS);
    const fact = `${key} ${presence.jid}`;
    if (asserted.has(fact)) return;
    const learned = { room: presence.room, occupantId: presence.occupantId, jid: presence.jid };
    asserted.set(fact, learned);
    for (const listener of listeners) listener(learned.room, learned.occupantId, learned.jid);
  });
  return {
    byNick: (from) => nicks.get(from),
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
