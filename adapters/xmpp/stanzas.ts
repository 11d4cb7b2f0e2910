import { xml, type Element } from '@xmpp/client';

/** The XML namespaces this adapter speaks. */
export const NS = {
  muc: 'http://jabber.org/protocol/muc',
  mucUser: 'http://jabber.org/protocol/muc#user',
  mucOwner: 'http://jabber.org/protocol/muc#owner',
  discoItems: 'http://jabber.org/protocol/disco#items',
  discoInfo: 'http://jabber.org/protocol/disco#info',
  mam: 'urn:xmpp:mam:2',
  forward: 'urn:xmpp:forward:0',
  sid: 'urn:xmpp:sid:0',
  rsm: 'http://jabber.org/protocol/rsm',
  data: 'jabber:x:data',
  delay: 'urn:xmpp:delay',
  occupantId: 'urn:xmpp:occupant-id:0',
  /** XEP-0249, direct invitations. */
  conference: 'jabber:x:conference',
  /** XEP-0461, message replies. */
  reply: 'urn:xmpp:reply:0',
  /** XEP-0428, fallback indication (the quoted text a reply carries for clients without XEP-0461). */
  fallback: 'urn:xmpp:fallback:0',
} as const;

/**
 * Text as XML can carry it: the characters XML 1.0 forbids (NUL and the other C0 controls but tab, line
 * feed and carriage return; lone surrogates; U+FFFE and U+FFFF) become U+FFFD, so no text, however
 * hostile, breaks a stanza or the stream. Markup-looking text is escaped by the serializer as any text is.
 */
export function xmlText(text: string): string {
  return text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/** Presence that joins a room as `nick`, asking for no history (the archive is read instead). */
export function joinPresence(room: string, nick: string): Element {
  return xml('presence', { to: `${room}/${nick}` }, xml('x', { xmlns: NS.muc }, xml('history', { maxstanzas: '0' })));
}

/** A groupchat message in a room thread (XEP-0201), carrying its origin-id (XEP-0359): what a delivery posts. */
export function threadMessage(room: string, thread: string, originId: string, body: string): Element {
  return xml(
    'message',
    { to: room, type: 'groupchat', id: originId },
    xml('body', {}, xmlText(body)),
    xml('thread', {}, thread),
    xml('origin-id', { xmlns: NS.sid, id: originId }),
  );
}

/** A groupchat message in a room outside any thread (what the bot says on joining at an invitation). */
export function roomMessage(room: string, originId: string, body: string): Element {
  return xml('message', { to: room, type: 'groupchat', id: originId }, xml('body', {}, xmlText(body)), xml('origin-id', { xmlns: NS.sid, id: originId }));
}

/** A direct message to one person (an answer to what they sent the bot). */
export function directMessage(to: string, id: string, body: string): Element {
  return xml('message', { to, type: 'chat', id }, xml('body', {}, xmlText(body)));
}

/** The bot's available presence: without it the server routes no direct message to its session. */
export const availablePresence = (): Element => xml('presence');

export const discoItems = (to: string): Element => xml('iq', { type: 'get', to }, xml('query', { xmlns: NS.discoItems }));
export const discoInfo = (to: string): Element => xml('iq', { type: 'get', to }, xml('query', { xmlns: NS.discoInfo }));

/** A data form field as `<field var=… ><value>…</value></field>` (a submitted form). */
export const formField = (name: string, value: string): Element => xml('field', { var: name }, xml('value', {}, value));

/** Which page of an archive: see {@link archiveQuery}. */
export interface ArchivePageRequest {
  readonly max: number;
  readonly before?: string | null;
  readonly after?: string | null;
  readonly start?: Date | null;
  /** With neither `before` nor `after`: the first page (from `start`), not the latest. */
  readonly forward?: boolean;
}

/**
 * A MAM query at a room (XEP-0313): a page of at most `max` messages, the latest (RSM `<before/>`),
 * the page before `before`, the one after `after` (archive ids), or the first (`forward`); `start` keeps only messages
 * archived at or after that time.
 */
export function archiveQuery(room: string, queryId: string, page: ArchivePageRequest): Element {
  const set = xml(
    'set',
    { xmlns: NS.rsm },
    xml('max', {}, String(page.max)),
    page.after != null ? xml('after', {}, page.after) : page.forward === true ? null : xml('before', {}, page.before ?? ''),
  );
  const form = page.start == null
    ? null
    : xml('x', { xmlns: NS.data, type: 'submit' }, formField('FORM_TYPE', NS.mam), formField('start', page.start.toISOString().replace(/\.\d{3}Z$/, 'Z')));
  return xml('iq', { type: 'set', to: room }, xml('query', { xmlns: NS.mam, queryid: queryId }, form, set));
}

/** The message a MAM result carries, with its archive id, or null when the stanza is no result of `queryId`. */
export function archivedMessage(stanza: Element, queryId: string): { id: string; message: Element } | null {
  if (!stanza.is('message')) return null;
  const result = stanza.getChild('result', NS.mam);
  if (result === undefined || result.attrs.queryid !== queryId) return null;
  const message = result.getChild('forwarded', NS.forward)?.getChild('message');
  const id = result.attrs.id;
  return message === undefined || id === undefined ? null : { id, message };
}

/**
 * What a room message says of itself: its thread, origin-id, body, the room's stanza id, its occupant.
 * Who sent it is not among them: the sender's own elements (a `muc#user` item naming someone) are
 * claims, not facts; the room's presence tells (see `occupants.ts`).
 */
export function messageFacts(message: Element, room: string) {
  const stanzaId = message.getChildren('stanza-id', NS.sid).find((s) => s.attrs.by === room)?.attrs.id ?? null;
  const occupantIds = message.getChildren('occupant-id', NS.occupantId);
  return {
    thread: message.getChildText('thread'),
    originId: message.getChild('origin-id', NS.sid)?.attrs.id ?? null,
    body: message.getChildText('body'),
    /** `room/nick`: stamped by the room. */
    from: message.attrs.from ?? null,
    stanzaId,
    /** XEP-0421: the room's stable id of the occupant (it strips a sender's own before it stamps it); two are none. */
    occupantId: occupantIds.length === 1 ? occupantIds[0]!.attrs.id ?? null : null,
    /** A delayed delivery (history, offline storage) carries when it was first sent. */
    delayed: message.getChild('delay', NS.delay)?.attrs.stamp ?? null,
  };
}

/** A JID without its resource, in lower case; null for none. */
export function bareJid(jid: string | null | undefined): string | null {
  if (jid == null || jid === '') return null;
  const slash = jid.indexOf('/');
  return (slash < 0 ? jid : jid.slice(0, slash)).toLowerCase();
}
