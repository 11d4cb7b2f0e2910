import type { Address, Channel, ChannelPlace } from '../domain/model.ts';

/** A conversation handed to a channel: where it lands, and what it carries. */
export interface Delivery {
  readonly channel: string;
  /** The place it lands in (a room, a thread of a room). */
  readonly place: string;
  /** Open a new thread at the place (true), or land in the place itself. */
  readonly new_thread: boolean;
  /** The title of what lands (a new thread's title on the platform). */
  readonly title: string;
}

/**
 * The channels the console can move conversations to (the console itself, team chat, ...). The
 * memory adapter serves the world file's channels; a chat platform adapter answers the same from
 * the platform (its rooms, its members' links, the agents present) and posts on delivery.
 */
export interface ChannelPort {
  /** Every connected channel, with the users linked on it, the agents connected to it, and its top places. */
  channels(): Promise<Channel[]>;
  /** One level of a channel's places: the top when `inside` is null, else those inside that place; null when nothing opens by that value. */
  places(channelId: string, inside: string | null): Promise<readonly ChannelPlace[] | null>;
  /** Hands a conversation to a place; answers the address it lives at there. */
  deliver(delivery: Delivery): Promise<Address>;
}
