/** Where a chat adapter stopped reading a place (a room): the platform's id of the last message handled there, and when it was posted. */
export interface ChatCursor {
  /** The platform's message id (an XMPP room's stanza id): the archive is read after it. */
  readonly id: string;
  /** ISO 8601: when it was posted (read from the archive again from there when the id is no longer known). */
  readonly at: string;
}

/** The most places one channel serves by invitation: an invitation past it is declined. */
export const SERVED_PLACES_MAX = 100;

/** What became of a place to serve: newly served, served already, or declined (the channel serves {@link SERVED_PLACES_MAX}). */
export type Served = 'added' | 'known' | 'full';

/**
 * What a chat adapter keeps so that nothing people post is lost or handled twice, across restarts,
 * reconnects and instances (contract section 9, "Nothing lost while away"):
 * - per (channel, place), the last message handled there, from which the archive is read again;
 * - per (channel, key), a claim: one instance at a time handles a message (its key names it), and once
 *   it is done no instance handles it again; a claim whose holder died lapses;
 * - per (channel, place, occupant), who the platform asserted that occupant id to be (an XMPP room's
 *   XEP-0421 id, from its presence), so a message read back from the archive after a restart names its
 *   sender even when they left before the bot came back;
 * - per channel, the places the bot was invited to and serves (joined again after a restart), at most
 *   {@link SERVED_PLACES_MAX}.
 */
export interface ChatInbox {
  /** The place's cursor, or null when nothing was read there yet. */
  cursor(channel: string, place: string): Promise<ChatCursor | null>;
  /** Moves the place's cursor to this message (written whatever it was). */
  advance(channel: string, place: string, cursor: ChatCursor): Promise<void>;
  /**
   * Claims `key` on the channel for `holder` during `leaseMs`: true when it was never claimed, or its
   * claim lapsed without being done; false while another holder has it, and for ever once it is done.
   */
  claim(channel: string, key: string, holder: string, leaseMs: number): Promise<boolean>;
  /** Marks a claimed key done: no claim of it succeeds again. */
  done(channel: string, key: string): Promise<void>;
  /**
   * Whether `key` is done on the channel: what a refused claim means (done: handled, read past it; not
   * done: another holder has it now, or had it and died, and it must be read again once its claim lapses).
   */
  isDone(channel: string, key: string): Promise<boolean>;
  /**
   * Forgets the claims (of every channel) made before `before` that are done or whose lease lapsed: a
   * forgotten key can be claimed again. Answers how many went. Called with a horizon no archive read
   * reaches back to (core/channels/chat-claims.ts).
   */
  pruneClaims(before: Date): Promise<number>;
  /**
   * Remembers that the platform asserted the occupant id `occupant` of `place` to be `sender` (a bare
   * address). An id remembered for two different senders names nobody from then on: the platform's
   * ids are stable per person, so two senders under one id is a forgery or a reuse, never guessed between.
   */
  rememberOccupant(channel: string, place: string, occupant: string, sender: string): Promise<void>;
  /** The sender remembered for the occupant id, or null: never remembered, or remembered for two senders. */
  occupant(channel: string, place: string, occupant: string): Promise<string | null>;
  /**
   * Adds `place` to the places the bot serves on the channel (it was invited there by a linked user): `added`,
   * `known` (served already; nothing changes), or `full` (the channel serves {@link SERVED_PLACES_MAX} places
   * already; nothing is added). Two instances adding at once may each add one past the bound, never more.
   */
  serve(channel: string, place: string): Promise<Served>;
  /** The places the bot serves on the channel, oldest first. */
  served(channel: string): Promise<string[]>;
  /** Stops serving `place` on the channel (the room kicked or banned the bot, or refuses it): true when it was served. */
  unserve(channel: string, place: string): Promise<boolean>;
}
