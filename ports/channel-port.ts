import type { Address, Channel, ChannelPlace } from '../domain/model.ts';
import type { ChatHandlers } from './chat-inbound.ts';
import type { Delivery } from './delivery-outbox.ts';

/**
 * The channels the console can move conversations to (the console itself, team chat, ...). The
 * memory adapter serves the world file's channels; a chat platform adapter answers the same from
 * the platform (its rooms, its members' links, the agents present) and posts on delivery
 * (docs/channels.md).
 */
export interface ChannelPort {
  /** Every connected channel, with the users linked on it, the agents connected to it, and its top places. */
  channels(): Promise<Channel[]>;
  /** One level of a channel's places: the top when `inside` is null, else those inside that place; null when nothing opens by that value. */
  places(channelId: string, inside: string | null): Promise<readonly ChannelPlace[] | null>;
  /**
   * Posts a delivery on the platform. Idempotent by `delivery.id`: a delivery asked again (a retry
   * after a time-out whose post did land) posts nothing more. Rejects when the platform cannot take
   * it now; the outbox asks again later. Answers a {@link DeliveryLanding} when the post opened a thread
   * whose address the platform decided (Slack's top-level message): what was stored at `delivery.address`
   * moves there.
   */
  deliver(delivery: Delivery): Promise<DeliveryLanding | void>;
  /**
   * From now on, people's messages on the channel's places go to `handlers` (inbound, contract section
   * 9): each message once, with the platform's stable id, the sender's address and the text as written;
   * never the bot's own posts nor another bot's. What was posted while nobody listened (before, or
   * between a `close` and the next `listen`) is read from the place's history, from where the last
   * listener stopped (`handlers.inbox`). One listener at a time.
   */
  listen(handlers: ChatHandlers): ChannelListener;
}

/** Where a delivery that opened a new thread landed, when the platform decided it by posting. */
export interface DeliveryLanding {
  readonly address: Address;
}

/** A channel's inbound side once it listens. */
export interface ChannelListener {
  /**
   * Reads a top-level place's history (a room's archive) again from where the listener stopped, each
   * message through the same path: nothing handed over already is handed over again. Resolves once
   * what was heard there so far, and the history read, was handed over.
   */
  catchUp(channelId: string, place: string): Promise<void>;
  /** Stops handing messages over (the channel may be listened to again). */
  close(): void;
}

/**
 * Thrown by a channel adapter whose platform cannot be reached now (its server is down, the bot is
 * reconnecting): a places listing answers 503 `channel_unavailable`, and a delivery waits in the outbox.
 */
export class ChannelUnavailableError extends Error {
  constructor(message = 'The channel cannot be reached now', options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ChannelUnavailableError';
  }
}
