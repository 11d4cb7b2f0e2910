import type { Address } from '../domain/model.ts';

/**
 * A new thread's address as the platform gave it. A teleport decides where the conversation lives when
 * the move is written (`delivery.address`); a platform that names a thread only once its first post is
 * made (Slack: the top-level message's `ts`) answers the real address on delivery, and everything stored
 * at the provisional one moves there.
 */
export interface AddressLanding {
  /**
   * Everything stored at `from` is at `to` from now on, in one write: the conversations living there, the
   * `moved_to` of conversations that moved there, and the deliveries still waiting to be posted there
   * (their address and place). Idempotent: nothing at `from` (landed before) writes nothing.
   */
  landAt(from: Address, to: Address): Promise<void>;
}
