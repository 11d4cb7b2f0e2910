import type { Element } from '@xmpp/client';
import { bareJid, NS } from './stanzas.ts';

/** A room the bot was invited to, and who invited it, as the server asserts it. */
export interface RoomInvitation {
  /** The room's bare JID, on the bot's MUC service. */
  readonly room: string;
  /** The inviter's bare JID. */
  readonly inviter: string;
  /** The inviter's JID as given (their client's full JID, where a decline goes: a client without presence gets no message sent to a bare JID). */
  readonly replyTo: string;
  /** The invitation's stanza id (what a repeat of it carries), or null. */
  readonly id: string | null;
  readonly kind: 'mediated' | 'direct';
}

/**
 * An invitation to a room of the bot's MUC service, or null when the stanza is none (or one not to trust):
 * - mediated (XEP-0045 7.8.2): a message from the room itself (a bare JID on the MUC service, which only the
 *   server can send from) carrying `<x xmlns='muc#user'><invite from='…'/></x>`: the room names the inviter;
 * - direct (XEP-0249): a message carrying `<x xmlns='jabber:x:conference' jid='room'/>`, from the inviter's
 *   own JID as their server stamped it; a `jid` off the bot's MUC service is not taken.
 * Who invited is never read from text the inviter wrote (a reason, a body).
 */
export function roomInvitation(stanza: Element, mucService: string, botJid: string): RoomInvitation | null {
  if (!stanza.is('message') || stanza.attrs.type === 'groupchat' || stanza.attrs.type === 'error') return null;
  const muc = mucService.toLowerCase();
  const onService = (jid: string | null): jid is string => jid !== null && jid.indexOf('@') > 0 && jid.slice(jid.indexOf('@') + 1) === muc;
  const from = stanza.attrs.from ?? '';
  const id = stanza.attrs.id ?? null;
  const invites = stanza.getChildren('x', NS.mucUser).flatMap((x) => x.getChildren('invite'));
  if (invites.length > 0) {
    const room = bareJid(from);
    // From the room's bare JID only: `room/nick` is an occupant, and anything else is not the room speaking.
    if (from.includes('/') || !onService(room) || invites.length !== 1) return null;
    const replyTo = invites[0]!.attrs.from ?? '';
    const inviter = bareJid(replyTo);
    return inviter === null || inviter === botJid || inviter.endsWith(`@${muc}`) ? null : { room, inviter, replyTo, id, kind: 'mediated' };
  }
  const direct = stanza.getChildren('x', NS.conference);
  if (direct.length !== 1) return null;
  const room = bareJid(direct[0]!.attrs.jid);
  const inviter = bareJid(from);
  if (!onService(room) || inviter === null || inviter === botJid || inviter === muc || inviter.endsWith(`@${muc}`)) return null;
  return { room, inviter, replyTo: from, id, kind: 'direct' };
}

/**
 * What the bot says in a room it joined at someone's invitation: who invited it by their nick there (never their
 * real JID, which the room may hide from others), or, when they are not in the room, that a linked user did; and
 * why it cannot take messages there, when it cannot (`barred`).
 */
export function joinedNotice(inviterNick: string | null, nick: string, barred: string | null): string {
  const who = inviterNick === null ? 'A linked console user' : inviterNick;
  if (barred !== null) return `${who} invited me here, but I cannot take messages in this room: ${barred}.`;
  return `${who} invited me here. Start a conversation with "${nick}: …"; to talk to one, write in its thread or reply to one of its posts.`;
}
