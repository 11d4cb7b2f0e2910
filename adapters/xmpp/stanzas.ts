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
} as const;

/** Presence that joins a room as `nick`, asking for no history (the archive is read instead). */
export function joinPresence(room: string, nick: string): Element {
  return xml('presence', { to: `${room}/${nick}` }, xml('x', { xmlns: NS.muc }, xml('history', { maxstanzas: '0' })));
}

/** A groupchat message in a room thread (XEP-0201), carrying its origin-id (XEP-0359): what a delivery posts. */
export function threadMessage(room: string, thread: string, originId: string, body: string): Element {
  return xml(
    'message',
    { to: room, type: 'groupchat', id: originId },
    xml('body', {}, body),
    xml('thread', {}, thread),
    xml('origin-id', { xmlns: NS.sid, id: originId }),
  );
}

export const discoItems = (to: string): Element => xml('iq', { type: 'get', to }, xml('query', { xmlns: NS.discoItems }));
export const discoInfo = (to: string): Element => xml('iq', { type: 'get', to }, xml('query', { xmlns: NS.discoInfo }));

/** A data form field as `<field var=… ><value>…</value></field>` (a submitted form). */
export const formField = (name: string, value: string): Element => xml('field', { var: name }, xml('value', {}, value));

/**
 * A MAM query at a room (XEP-0313): a page of at most `max` messages, the latest (RSM `<before/>`),
 * the page before `before`, or the one after `after` (archive ids); `start` keeps only messages
 * archived at or after that time.
 */
export function archiveQuery(room: string, queryId: string, page: { max: number; before?: string | null; after?: string | null; start?: Date | null }): Element {
  const set = xml(
    'set',
    { xmlns: NS.rsm },
    xml('max', {}, String(page.max)),
    page.after != null ? xml('after', {}, page.after) : xml('before', {}, page.before ?? ''),
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

/** What a room message says of itself: its thread, origin-id, body, the room's stanza id. */
export function messageFacts(message: Element, room: string) {
  const stanzaId = message.getChildren('stanza-id', NS.sid).find((s) => s.attrs.by === room)?.attrs.id ?? null;
  return {
    thread: message.getChildText('thread'),
    originId: message.getChild('origin-id', NS.sid)?.attrs.id ?? null,
    body: message.getChildText('body'),
    from: message.attrs.from ?? null,
    stanzaId,
  };
}
