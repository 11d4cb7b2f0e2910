/**
 * The rules of XMPP channels (contract section 9) that need no connection: what a bare JID and a
 * domain look like, and how a room thread's address is written and read.
 */

/** A domain name: letters, digits, hyphens and dots (no port, no scheme). */
export const DOMAIN_PATTERN = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** A bare JID: a local part without the characters XMPP forbids there, `@`, a domain; no resource. */
export const BARE_JID_PATTERN = /^[^\s"&'/:<>@]{1,1023}@(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** An xmpp channel's `service`: `xmpp://host:port` (or `xmpps://`), nothing after the authority. */
export const XMPP_SERVICE_PATTERN = /^xmpps?:\/\/[^\s/?#]+\/?$/;

/** The channel kind served by the XMPP adapter. */
export const XMPP_KIND = 'xmpp';

/** What separates a room's JID from a thread id in a room thread's address (`room@muc#thread`). */
const THREAD_MARK = '#';

/** The address of a thread in a room: `<room jid>#<thread id>`. */
export function roomThreadAddress(room: string, thread: string): string {
  return `${room}${THREAD_MARK}${thread}`;
}

/** A room thread's address read back: its room and thread, or null when it names a room alone (or nothing). */
export function parseRoomThread(address: string): { readonly room: string; readonly thread: string } | null {
  const at = address.indexOf(THREAD_MARK);
  if (at <= 0 || at === address.length - 1) return null;
  const room = address.slice(0, at);
  if (!BARE_JID_PATTERN.test(room)) return null;
  return { room, thread: address.slice(at + 1) };
}

/** The bot's account on an xmpp channel, as the world file gives it; the password is in the environment variable `password_env`. */
export interface XmppAccount {
  /** `xmpp://host:port` (or `xmpps://`). */
  readonly service: string;
  readonly domain: string;
  /** The MUC service's domain (`conference.<domain>`). */
  readonly muc: string;
  /** The bot's bare JID. */
  readonly jid: string;
  /** The environment variable holding the bot's password. */
  readonly password_env: string;
  /** The bot's nick in rooms. */
  readonly nick: string;
}
