import type { Catalog } from '../../ports/catalog.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import { placesInside } from '../../domain/operations.ts';

/**
 * The channels of the world file (through the catalog). They are no platform: a delivery is taken
 * and nothing is kept of it (the outbox has already stored it with its move, and removes it now).
 */
export function memoryChannelPort(catalog: Catalog): ChannelPort {
  return {
    channels: () => catalog.channels(),
    async places(channelId, inside) {
      const channel = (await catalog.channels()).find((c) => c.id === channelId);
      return channel === undefined ? null : placesInside(channel, inside);
    },
    async deliver() {},
  };
}
