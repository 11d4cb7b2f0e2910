import { randomUUID } from 'node:crypto';
import type { Address } from '../../domain/model.ts';
import { placesInside } from '../../domain/operations.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ChannelPort, Delivery } from '../../ports/channel-port.ts';

/** The channels of the world file (through the catalog); deliveries are kept, in order, for whoever looks. */
export function memoryChannelPort(catalog: Catalog): ChannelPort & { readonly delivered: readonly Delivery[] } {
  const delivered: Delivery[] = [];
  return {
    delivered,
    channels: () => catalog.channels(),
    async places(channelId, inside) {
      const channel = (await catalog.channels()).find((c) => c.id === channelId);
      return channel === undefined ? null : placesInside(channel, inside);
    },
    async deliver(delivery): Promise<Address> {
      delivered.push(delivery);
      // A new thread at a place lives under it; landing in the place itself lives at the place.
      return { channel: delivery.channel, id: delivery.new_thread ? `${delivery.place}/${randomUUID()}` : delivery.place };
    },
  };
}
