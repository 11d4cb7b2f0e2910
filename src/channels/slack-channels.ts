import type { RoutedChannel } from './routed-channel-port.ts';
import { requireSecrets, type ChatChannelOptions } from './xmpp-channels.ts';

/**
 * The world's slack channels, each served over Socket Mode (the adapter, and Slack's SDK, are loaded only
 * when there is one). Both tokens are read from the variables the channel names; one that is not set stops
 * the start.
 */
export async function slackChannelPorts(options: ChatChannelOptions): Promise<RoutedChannel[]> {
  const settings = options.world?.slack ?? [];
  if (settings.length === 0) return [];
  const tokens = settings.map(({ settings: s }) => ({ app: options.env[s.app_token_env] ?? '', bot: options.env[s.bot_token_env] ?? '' }));
  requireSecrets(options.file, settings.flatMap((setting, i) => [
    ...(tokens[i]!.app === '' ? [{ path: `channels[${setting.channel}].slack.app_token_env`, name: setting.settings.app_token_env, what: 'the app-level token, xapp-…' }] : []),
    ...(tokens[i]!.bot === '' ? [{ path: `channels[${setting.channel}].slack.bot_token_env`, name: setting.settings.bot_token_env, what: 'the bot token, xoxb-…' }] : []),
  ]));
  const { slackChannelPort, startSlackChannel } = await import('../../adapters/slack/channel-port.ts');
  return settings.map((setting, i) => startSlackChannel(slackChannelPort({
    channelId: setting.channel,
    settings: setting.settings,
    appToken: tokens[i]!.app,
    botToken: tokens[i]!.bot,
    catalog: options.catalog,
    log: options.log.child({ channel: setting.channel }),
    ...(options.living === undefined ? {} : { living: options.living }),
    ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }),
  })));
}
