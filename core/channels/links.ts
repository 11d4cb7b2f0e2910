import type { Failure } from '../../domain/errors.ts';
import type { Channel, User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ChannelLinks, RedeemOutcome } from '../../ports/channel-links.ts';

/** The letters and digits of a link code: no 0/O, 1/I/L, so a code read aloud or retyped survives. */
export const LINK_CODE_ALPHABET = '23456789ABCDEFGHJKMNPQRSTUVWXYZ';
export const LINK_CODE_LENGTH = 8;
/** How long a link code works. */
export const LINK_CODE_TTL_MS = 10 * 60_000;

/** A link as `GET /api/account/links` answers it. */
export interface LinkInfo {
  readonly channel: string;
  readonly address: string;
  /** When the user linked it; null for a link the world file makes. */
  readonly created_at: string | null;
  /** `code`: the user linked it with a link code (and may remove it); `world`: the world file links it. */
  readonly source: 'code' | 'world';
}

/** A channel the user can link to an address on: every connected channel but the console. */
export interface LinkableChannel {
  readonly id: string;
  readonly name: string;
  readonly kind: string;
}

/** A new link code, shown once: only its hash is stored. */
export interface LinkCode {
  readonly channel: string;
  readonly code: string;
  readonly expires_at: string;
  /** What to send the channel's bot in a direct message. */
  readonly send: string;
}

/** What a `link <code>` message did, and what the bot answers its sender. */
export type Redeemed =
  | { readonly kind: 'linked'; readonly user: string; readonly reply: string }
  | { readonly kind: 'refused'; readonly reason: 'unknown' | 'expired' | 'used' | 'address_taken'; readonly reply: string };

/** The world file's links of a channel, user id to address (contract section 9, `links`); none without one. */
export type WorldLinks = (channel: Channel) => Readonly<Record<string, string>>;

/** A code as typed: spaces and dashes dropped, letters in upper case. */
export const normalizeLinkCode = (typed: string): string => typed.replace(/[\s-]+/g, '').toUpperCase();

const isLinkCode = (code: string): boolean =>
  code.length === LINK_CODE_LENGTH && [...code].every((char) => LINK_CODE_ALPHABET.includes(char));

/** The SHA-256 of a code (hex), what storage keeps of it. */
export async function linkCodeHash(code: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(normalizeLinkCode(code)));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** A code of uniformly random characters of the alphabet (bytes past the last whole multiple are drawn again). */
function newCode(random: (bytes: Uint8Array) => Uint8Array): string {
  const limit = 256 - (256 % LINK_CODE_ALPHABET.length);
  let code = '';
  while (code.length < LINK_CODE_LENGTH) {
    for (const byte of random(new Uint8Array(16))) {
      if (byte < limit && code.length < LINK_CODE_LENGTH) code += LINK_CODE_ALPHABET[byte % LINK_CODE_ALPHABET.length];
    }
  }
  return code;
}

const REFUSALS: Readonly<Record<Exclude<RedeemOutcome['kind'], 'linked'>, string>> = {
  unknown: 'This link code is not known here. Ask the console for a new one (Chat links), then send "link <code>" again.',
  expired: 'This link code has expired (codes work for 10 minutes). Ask the console for a new one.',
  used: 'This link code was already used. Ask the console for a new one.',
  address_taken: 'This address is linked to another console user on this channel. They can remove the link in the console.',
};

const WORLD_LINKED = "This address is linked to a console user by the service's configuration: it needs no code.";

const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path, message }] });

/**
 * Linking console users to chat addresses (contract section 9, "Linking"): a user asks for a one-use
 * code for a channel and sends `link <code>` to the channel's bot from the address to link; the
 * channel's adapter calls {@link redeemLinkCode} with what it received and answers the reply.
 */
export function channelLinking(deps: {
  readonly links: ChannelLinks;
  readonly catalog: Catalog;
  /** The world file's links (the XMPP channels' `links` map); none by default. */
  readonly worldLinks?: WorldLinks;
  /** Milliseconds since the epoch; `Date.now` by default. Expiry is decided by this clock. */
  readonly now?: () => number;
  /** Fills the bytes with random values; the Web Crypto API's by default. */
  readonly random?: (bytes: Uint8Array) => Uint8Array;
  /** Whether a user may act now (not deactivated); everyone by default. A deactivated user's links name no one. */
  readonly isActive?: (userId: string) => Promise<boolean>;
}) {
  const { links, catalog } = deps;
  const now = deps.now ?? Date.now;
  const random = deps.random ?? ((bytes: Uint8Array) => crypto.getRandomValues(bytes));
  const worldLinks: WorldLinks = deps.worldLinks ?? (() => ({}));
  const isoAt = (ms: number) => new Date(ms).toISOString();

  /** A connected channel that is not the console, or null. */
  const linkable = async (channelId: string): Promise<Channel | null> =>
    (await catalog.channels()).find((channel) => channel.id === channelId && channel.kind !== 'console') ?? null;

  /** The user the world file links to the address on the channel, or null. */
  const worldUserAt = (channel: Channel, address: string): string | null =>
    Object.entries(worldLinks(channel)).find(([, linked]) => linked.toLowerCase() === address.toLowerCase())?.[0] ?? null;

  return {
    /** The channels a user can link: every connected channel but the console. */
    async linkableChannels(): Promise<LinkableChannel[]> {
      return (await catalog.channels()).filter((c) => c.kind !== 'console').map((c) => ({ id: c.id, name: c.name, kind: c.kind }));
    },

    /** A new one-use code for (user, channel), valid ten minutes; the user's earlier code for the channel stops working. */
    async linkCode(user: User, channelId: string): Promise<Result<LinkCode, Failure>> {
      const channels = await catalog.channels();
      const channel = channels.find((c) => c.id === channelId);
      if (channel === undefined) return fail(invalid('body.channel', 'is not a channel of GET /api/account/link-channels'));
      if (channel.kind === 'console') return fail({ code: 'channel_not_linkable' });
      const code = newCode(random);
      const made = now();
      const expires_at = isoAt(made + LINK_CODE_TTL_MS);
      await links.createCode({ code_hash: await linkCodeHash(code), user: user.id, channel: channel.id, created_at: isoAt(made), expires_at });
      return ok({ channel: channel.id, code, expires_at, send: `link ${code}` });
    },

    /**
     * What `link <code>` sent from `address` on the channel does: links the code's user to the address
     * (exactly once per code), or says why not. The reply is for the sender, in the direct message.
     */
    async redeemLinkCode(channelId: string, address: string, typed: string): Promise<Redeemed> {
      const code = normalizeLinkCode(typed);
      const channel = await linkable(channelId);
      const refused = (reason: Exclude<RedeemOutcome['kind'], 'linked'>): Redeemed => ({ kind: 'refused', reason, reply: REFUSALS[reason] });
      if (channel === null || !isLinkCode(code)) return refused('unknown');
      // The world file links this address already: a stored link would never be read. The code stays unused.
      if (worldUserAt(channel, address) !== null) return { kind: 'refused', reason: 'address_taken', reply: WORLD_LINKED };
      const outcome = await links.redeem({ channel: channel.id, address, code_hash: await linkCodeHash(code), at: isoAt(now()) });
      if (outcome.kind !== 'linked') return refused(outcome.kind);
      return { kind: 'linked', user: outcome.link.user, reply: `Linked: messages from ${outcome.link.address} on ${channel.name} are now ${outcome.link.user}'s in the console.` };
    },

    /** The user's links: the ones made with codes, and the world file's. */
    async links(user: User): Promise<LinkInfo[]> {
      const stored: LinkInfo[] = (await links.links(user.id)).map((l) => ({ channel: l.channel, address: l.address, created_at: l.created_at, source: 'code' }));
      const fixed: LinkInfo[] = (await catalog.channels()).flatMap((channel) => {
        const address = worldLinks(channel)[user.id];
        return address === undefined ? [] : [{ channel: channel.id, address: address.toLowerCase(), created_at: null, source: 'world' as const }];
      });
      return [...stored, ...fixed].sort((a, b) => (a.channel < b.channel ? -1 : a.channel > b.channel ? 1 : a.source < b.source ? -1 : 1));
    },

    /** Removes the user's code-made link on the channel (the world file's cannot be removed here). */
    async unlink(user: User, channelId: string): Promise<Result<null, Failure>> {
      return (await links.unlink(user.id, channelId)) ? ok(null) : fail({ code: 'link_not_found' });
    },

    /**
     * The console user an address on the channel belongs to: the world file's link first, then a stored one;
     * null when none, or when that user is deactivated (a chat link is a credential: it stops with the others).
     */
    async userAt(channelId: string, address: string): Promise<string | null> {
      const channel = await linkable(channelId);
      if (channel === null) return null;
      const user = worldUserAt(channel, address) ?? (await links.userAt(channel.id, address));
      return user === null || deps.isActive === undefined || (await deps.isActive(user)) ? user : null;
    },
  };
}

export type ChannelLinking = ReturnType<typeof channelLinking>;
