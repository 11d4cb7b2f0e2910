import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import { routedChannelPort, type ListeningChannels } from './routed-channel-port.ts';
import { slackChannelPorts } from './slack-channels.ts';
import { xmppChannelPorts, type ChatChannelOptions } from './xmpp-channels.ts';

/** Each chat platform's channels of a world, by the adapter that serves them: one line per platform. */
const PLATFORMS = [xmppChannelPorts, slackChannelPorts] as const;

/**
 * The channels of a world with chat channels (xmpp, slack): each served by its platform's adapter, every
 * other one by the world file's channels (in memory). Null when the world has none: the service then uses
 * the world file's channels alone. A secret variable a channel names that is not set stops the start.
 */
export async function chatChannels(options: ChatChannelOptions): Promise<ListeningChannels | null> {
  const routed = (await Promise.all(PLATFORMS.map((ports) => ports(options)))).flat();
  return routed.length === 0 ? null : routedChannelPort(memoryChannelPort(options.catalog), routed);
}
