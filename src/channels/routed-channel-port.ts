import type { Channel } from '../../domain/model.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';

/** A channel port that serves some channels itself (a platform adapter per channel). */
export interface RoutedChannel extends ChannelPort {
  readonly channelId: string;
  close(): Promise<void>;
}

/**
 * One ChannelPort over several: each routed channel (an xmpp channel's adapter) answers for its own
 * id, every other channel is the fallback's (the world file's, in memory). The list of channels is
 * the fallback's, with each routed channel's entry in its place. Closing it closes the routed ones.
 */
export function routedChannelPort(fallback: ChannelPort, routed: readonly RoutedChannel[]): ChannelPort & { close(): Promise<void> } {
  const byId = new Map(routed.map((port) => [port.channelId, port]));
  return {
    async channels(): Promise<Channel[]> {
      const [all, own] = await Promise.all([fallback.channels(), Promise.all(routed.map((port) => port.channels()))]);
      const served = new Map(own.flat().map((channel) => [channel.id, channel]));
      return all.map((channel) => served.get(channel.id) ?? channel);
    },
    places: (channelId, inside) => (byId.get(channelId) ?? fallback).places(channelId, inside),
    deliver: (delivery) => (byId.get(delivery.channel) ?? fallback).deliver(delivery),
    async close() {
      await Promise.all(routed.map((port) => port.close()));
    },
  };
}
