/**
 * A console user's link to a chat address on a channel (contract section 9, "Linking"): messages from
 * that address on that channel are the user's. The address is opaque here (a bare JID on XMPP), stored
 * in lower case; a user has at most one link per channel, and an address belongs to at most one user
 * per channel.
 */
export interface ChannelLink {
  readonly user: string;
  readonly channel: string;
  /** Lower case. */
  readonly address: string;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/** A one-use link code as stored: only the SHA-256 of the code (hex), never the code. */
export interface LinkCodeWrite {
  readonly code_hash: string;
  readonly user: string;
  readonly channel: string;
  /** ISO 8601: the code is refused from this instant on. */
  readonly expires_at: string;
  /** ISO 8601: now, by the caller's clock (expiry is decided by the same clock). */
  readonly created_at: string;
}

/** A code redeemed from an address on a channel. */
export interface LinkRedemption {
  readonly channel: string;
  /** Compared and stored in lower case. */
  readonly address: string;
  readonly code_hash: string;
  /** ISO 8601: now, by the caller's clock; a code whose `expires_at` is not after it is expired. */
  readonly at: string;
}

/** What a redemption did: the link written (replacing the user's earlier one on the channel), or why not. */
export type RedeemOutcome =
  | { readonly kind: 'linked'; readonly link: ChannelLink; readonly replaced: string | null }
  /** No such code on this channel (never made, replaced by a newer one, or for another channel). */
  | { readonly kind: 'unknown' }
  | { readonly kind: 'expired' }
  | { readonly kind: 'used' }
  /** Another user holds this address on this channel; the code stays unused. */
  | { readonly kind: 'address_taken' };

/**
 * Stored links and the one-use codes that make them. A code is redeemed at most once, whatever the
 * races: two instances redeeming the same code at once link one address, the other is answered `used`.
 */
export interface ChannelLinks {
  /** Stores a new code for (user, channel); the user's earlier unredeemed codes for that channel stop working. */
  createCode(code: LinkCodeWrite): Promise<void>;
  /** Redeems a code: links its user to the address on the channel, in one decision with marking the code used. */
  redeem(redemption: LinkRedemption): Promise<RedeemOutcome>;
  /** The user's links, by channel id. */
  links(user: string): Promise<ChannelLink[]>;
  /** Removes the user's link on the channel; answers whether there was one. */
  unlink(user: string, channel: string): Promise<boolean>;
  /** The user linked to the address on the channel (compared in lower case), or null. */
  userAt(channel: string, address: string): Promise<string | null>;
}
