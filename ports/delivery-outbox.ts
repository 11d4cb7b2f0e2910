import type { Address, Id } from '../domain/model.ts';

/**
 * A conversation handed to a place of a channel, as the delivery outbox stores it until the channel
 * takes it. `id` is the idempotency key: a channel that is asked twice with one id posts once.
 */
export interface Delivery {
  readonly id: Id;
  readonly channel: string;
  /** The place it lands in (a room, a thread of a room). */
  readonly place: string;
  /** Open a new thread at the place (true), or land in the place itself (a chat thread). */
  readonly new_thread: boolean;
  /** The address the conversation lives at there (decided when the move is written, from `id`). */
  readonly address: Address;
  /** The title of what lands (a new thread's title on the platform). */
  readonly title: string;
  /** What is posted there: where the conversation came from, and the brief of its history; a turn's text (Markdown as agents write it). */
  readonly text: string;
  /**
   * The approval or question the post asks, for a platform that offers buttons (Slack's Block Kit); `text`
   * says the same in words (numbered options, answered by a reply). Absent or null: it asks nothing.
   */
  readonly ask?: DeliveryAsk | null;
  /**
   * The platform address of the one person the post is for (a reply to their message: how to link, a
   * refusal): a platform that can show a post to one person only (Slack's ephemeral messages) does so.
   * Absent or null: everyone at the place.
   */
  readonly to?: string | null;
  /**
   * Whether a channel may have been handed it before (the outbox says so when it hands it over): false, this
   * is its first handing over, so nothing of it can be on the platform yet and a channel may post without
   * looking; true or absent, it looks for its post first (a refusal after the post landed, a holder that died).
   */
  readonly handed_before?: boolean;
}

/** An approval or a question as a delivery carries it: a button per option where the platform offers them. */
export interface DeliveryAsk {
  /** The pending item's id: a button's answer names it. */
  readonly pending_id: Id;
  readonly kind: 'approval' | 'question';
  readonly title: string;
  readonly options: readonly { readonly id: string; readonly name: string }[];
}

/** A delivery waiting in the outbox, with how often the channel refused it so far. */
export interface QueuedDelivery extends Delivery {
  readonly attempts: number;
  /** Claimed before: refused (`attempts` > 0), or claimed by a holder whose claim lapsed (it died mid-way). */
  readonly handed_before: boolean;
}

/**
 * The deliveries to channels that moves wrote (in the move's own transaction), and the chat posts of
 * stored events (in the event's own write, EventLog.append), that no channel has taken yet. A dispatcher claims the due ones, hands each to its channel, and removes it once taken
 * or puts it back for later: a channel that is down delays a delivery and loses nothing.
 */
export interface DeliveryOutbox {
  /**
   * Claims up to `limit` deliveries that are due, oldest first, for `holder` during `leaseMs`: no
   * other holder gets them until the lease lapses (a holder that died leaves them due again).
   */
  claimDue(holder: string, leaseMs: number, limit: number): Promise<QueuedDelivery[]>;
  /**
   * Adds a delivery that neither a move nor an event writes (a reply to a chat message: how to link,
   * a refusal), due now. One already there by that id is left as it is.
   */
  add(delivery: Delivery): Promise<void>;
  /** Removes a delivery its channel took. Nothing is kept of it: the channel holds it now. */
  delivered(id: Id): Promise<void>;
  /** Puts back a delivery its channel refused, due again after `retryInMs`, with one more attempt counted. */
  retryLater(id: Id, retryInMs: number): Promise<void>;
}
