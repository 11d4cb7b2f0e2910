import type { Logger } from 'pino';
import { memoryChannelPort } from '../../adapters/memory/channel-port.ts';
import type { World } from '../../domain/world.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { WorldFileError } from '../open-storage.ts';
import { routedChannelPort, type ListeningChannels } from './routed-channel-port.ts';

/**
 * The channels of a world with xmpp channels: each served by its bot connection (the adapter is
 * loaded only then), every other one by the world file's channels. Null when the world has none:
 * the service then uses the world file's channels alone, as before. Each bot's password is read
 * from the variable its channel names; one that is not set stops the start.
 */
export async function xmppChannels(options: {
  world: World | null;
  env: NodeJS.ProcessEnv;
  catalog: Catalog;
  log: Logger;
  file: string;
  /** The conversations living on a channel (`ConversationStore.livingOn`): listed in their rooms, whose rooms the bot joins. */
  living?: (channel: string) => Promise<readonly { address: string; title: string }[]>;
  /** How long a chat message's claim holds before another instance may take it (the adapter's default without). */
  claimMs?: number;
}): Promise<ListeningChannels | null> {
  const settings = options.world?.xmpp ?? [];
  if (settings.length === 0) return null;
  const passwords = settings.map((setting) => options.env[setting.account.password_env] ?? '');
  const unset = settings.flatMap((setting, i) => (passwords[i] === '' ? [setting] : []));
  if (unset.length > 0) {
    throw new WorldFileError(options.file, unset.map((setting) => ({
      path: `channels[${setting.channel}].xmpp.password_env`,
      message: `names ${setting.account.password_env}, which is not set in the environment (the bot's password)`,
    })));
  }
  const { startXmppChannel, xmppChannelPort } = await import('../../adapters/xmpp/channel-port.ts');
  const routed = settings.map((setting, i) => startXmppChannel(xmppChannelPort({
    channelId: setting.channel,
    account: setting.account,
    password: passwords[i]!,
    catalog: options.catalog,
    log: options.log.child({ channel: setting.channel }),
    ...(options.living === undefined ? {} : { living: options.living }),
    ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }),
  })));
  return routedChannelPort(memoryChannelPort(options.catalog), routed);
}
