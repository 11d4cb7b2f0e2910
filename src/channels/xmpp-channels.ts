import type { Logger } from 'pino';
import type { World } from '../../domain/world.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { WorldFileError } from '../open-storage.ts';
import type { RoutedChannel } from './routed-channel-port.ts';

/** What a chat platform's channels are built from (src/channels/chat-channels.ts hands the same to each). */
export interface ChatChannelOptions {
  world: World | null;
  env: NodeJS.ProcessEnv;
  catalog: Catalog;
  log: Logger;
  file: string;
  /** The conversations living on a channel (`ConversationStore.livingOn`): listed in their places, whose rooms the bot joins. */
  living?: (channel: string) => Promise<readonly { address: string; title: string }[]>;
  /** How long a chat message's claim holds before another instance may take it (the adapter's default without). */
  claimMs?: number;
}

/** Stops the start when a variable a channel names for a secret is not set (its name, never a value). */
export function requireSecrets(file: string, unset: readonly { path: string; name: string; what: string }[]): void {
  if (unset.length === 0) return;
  throw new WorldFileError(file, unset.map(({ path, name, what }) => ({ path, message: `names ${name}, which is not set in the environment (${what})` })));
}

/**
 * The world's xmpp channels, each served by its bot connection (the adapter is loaded only when there is
 * one). Each bot's password is read from the variable its channel names; one that is not set stops the start.
 */
export async function xmppChannelPorts(options: ChatChannelOptions): Promise<RoutedChannel[]> {
  const settings = options.world?.xmpp ?? [];
  if (settings.length === 0) return [];
  const passwords = settings.map((setting) => options.env[setting.account.password_env] ?? '');
  requireSecrets(options.file, settings.flatMap((setting, i) => (passwords[i] === ''
    ? [{ path: `channels[${setting.channel}].xmpp.password_env`, name: setting.account.password_env, what: "the bot's password" }]
    : [])));
  const { startXmppChannel, xmppChannelPort } = await import('../../adapters/xmpp/channel-port.ts');
  return settings.map((setting, i) => startXmppChannel(xmppChannelPort({
    channelId: setting.channel,
    account: setting.account,
    password: passwords[i]!,
    catalog: options.catalog,
    log: options.log.child({ channel: setting.channel }),
    ...(options.living === undefined ? {} : { living: options.living }),
    ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }),
  })));
}
