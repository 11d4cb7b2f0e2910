import type { Address } from '../../domain/model.ts';
import type { AddressLanding } from '../../ports/address-landing.ts';
import type { MemoryState } from './state.ts';

const same = (a: Address | null | undefined, b: Address) => a?.channel === b.channel && a.id === b.id;

/**
 * A provisional address moved to the one the platform gave, over the memory state: the conversations at
 * `from`, the `moved_to` naming it, and the deliveries waiting there, in one synchronous step (no `await`:
 * nothing interleaves). Nothing at `from` writes nothing.
 */
export function memoryAddressLanding(state: MemoryState): AddressLanding {
  return {
    async landAt(from, to) {
      const at = { channel: to.channel, id: to.id };
      for (const [id, conversation] of state.conversations) {
        const address = same(conversation.address, from) ? at : conversation.address;
        const movedTo = conversation.moved_to !== null && same(conversation.moved_to.address, from) ? { ...conversation.moved_to, address: at } : conversation.moved_to;
        if (address !== conversation.address || movedTo !== conversation.moved_to) state.conversations.set(id, { ...conversation, address, moved_to: movedTo });
      }
      for (const entry of state.deliveries.values()) {
        if (same(entry.delivery.address, from)) entry.delivery = { ...entry.delivery, address: at, place: at.id };
      }
    },
  };
}
