import type { Channel } from '../../domain/model.ts';
import type { ChannelListener, ChannelPort } from '../../ports/channel-port.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';

/** A channel port that serves some channels itself (a platform adapter per channel). */
export interface RoutedChannel extends ChannelPort {
  readonly channelId: string;
  close(): Promise<void>;
}

/** Channels whose adapters take people's messages once the app is built: `listen` hands them the app's handlers. */
export interface ListeningChannels extends ChannelPort {
  close(): Promise<void>;
}

/**
 * One ChannelPort over several: each routed channel (an xmpp channel's adapter) answers for its own
 * id, every other channel is the fallback's (the world file's, in memory). The list of channels is
 * the fallback's, with each routed channel's entry in its place. Closing it closes the routed ones.
 */
export function routedChannelPort(fallback: ChannelPort, routed: readonly RoutedChannel[]): ListeningChannels {
  const byId = new Map(routed.map((port) => [port.channelId, port]));
  return {
    async channels(): Promise<Channel[]> {
      const [all, own] = await Promise.all([fallback.channels(), Promise.all(routed.map((port) => port.channels()))]);
      const served = new Map(own.flat().map((channel) => [channel.id, channel]));
      return all.map((channel) => served.get(channel.id) ?? channel);
    },
    places: (channelId, inside) => (byId.get(channelId) ?? fallback).places(channelId, inside),
    deliver: (delivery) => (byId.get(delivery.channel) ?? fallback).deliver(delivery),
    listen(handlers: ChatHandlers): ChannelListener {
      const listeners = [fallback, ...routed].map((port) => port.listen(handlers));
      return {
        catchUp: async (channelId, place) => {
          await Promise.all(listeners.map((listener) => listener.catchUp(channelId, place)));
        },
        close: () => listeners.forEach((listener) => listener.close()),
      };
    },
    async close() {
      await Promise.all(routed.map((port) => port.close()));
    },
  };
}
