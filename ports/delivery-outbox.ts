import type { Id } from '../domain/model.ts';
import type { Delivery } from './channel-port.ts';

/** A delivery waiting in the outbox, with how often the channel refused it so far. */
export interface QueuedDelivery extends Delivery {
  readonly attempts: number;
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
