import type { SlackSettings } from '../../domain/slack.ts';

/** The id of the demo world's Slack channel, there only when its variables are set (docs/operations.md, configuration). */
export const DEMO_SLACK_CHANNEL = 'slack-chat';

/**
 * The demo world file's JSON with a Slack channel added for `settings` (from the DEMO_SLACK_ variables,
 * `src/config.ts`), or the JSON as it is when `settings` is null. The channel offers every agent of the
 * world, links no one (people link themselves with a code), and names the variables that hold the two
 * tokens (`app_token_env`, `bot_token_env`), never a token. The result is validated as any world file is.
 */
export function withDemoSlackChannel(world: unknown, settings: SlackSettings | null): unknown {
  if (settings === null || typeof world !== 'object' || world === null) return world;
  const file = world as { channels?: unknown; agents?: unknown };
  const agents = Array.isArray(file.agents) ? file.agents.flatMap((agent: { id?: unknown }) => (typeof agent?.id === 'string' ? [agent.id] : [])) : [];
  const channel = {
    id: DEMO_SLACK_CHANNEL, kind: 'slack', name: 'Slack', shared: true, browsable: true, agents, linked_users: [],
    slack: { app_token_env: settings.app_token_env, bot_token_env: settings.bot_token_env, api_url: settings.api_url }, links: {},
  };
  return { ...file, channels: [...(Array.isArray(file.channels) ? file.channels : []), channel] };
}
