/**
 * The rules of Slack channels (contract section 10) that need no connection: what a Slack id looks like,
 * and how a thread's address is written and read.
 */

/** The channel kind served by the Slack adapter. */
export const SLACK_KIND = 'slack';

/** A Slack user id (`U…`, or `W…` in an Enterprise Grid): what a console user is linked to. */
export const SLACK_USER_PATTERN = /^[UW][A-Z0-9]{2,30}$/;

/** A Slack conversation id: a public channel (`C…`), a private one or a group (`G…`), a direct message (`D…`). */
export const SLACK_CHANNEL_PATTERN = /^[CGD][A-Z0-9]{2,30}$/;

/** A message's `ts`: seconds, a dot, microseconds; unique within its channel. */
export const SLACK_TS_PATTERN = /^\d{1,12}\.\d{6}$/;

/** A Web API base URL: http(s), ending with `/` (methods are appended to it). */
export const SLACK_API_URL_PATTERN = /^https?:\/\/[^\s?#]+\/$/;

/** The settings of a slack channel, as the world file gives them; the tokens stay in the variables they name. */
export interface SlackSettings {
  /** The variable holding the app-level token (`xapp-…`): Socket Mode's `apps.connections.open`. */
  readonly app_token_env: string;
  /** The variable holding the bot token (`xoxb-…`): every Web API call. */
  readonly bot_token_env: string;
  /** The Web API's base URL; null: Slack's own (`https://slack.com/api/`). */
  readonly api_url: string | null;
}

/** The address of a thread in a Slack channel: `<channel id>:<thread ts>`. */
export function slackThreadAddress(channel: string, ts: string): string {
  return `${channel}:${ts}`;
}

/**
 * An address of a Slack channel read back: a thread (`<channel>:<ts>`), a thread not posted yet whose
 * top-level message a delivery opens (`<channel>/<delivery id>`, as a teleport decides it), or a channel
 * alone; null: none of these.
 */
export function parseSlackAddress(address: string):
  | { readonly kind: 'thread'; readonly channel: string; readonly ts: string }
  | { readonly kind: 'opening'; readonly channel: string; readonly delivery: string }
  | { readonly kind: 'channel'; readonly channel: string }
  | null {
  if (SLACK_CHANNEL_PATTERN.test(address)) return { kind: 'channel', channel: address };
  const colon = address.indexOf(':');
  if (colon > 0) {
    const channel = address.slice(0, colon);
    const ts = address.slice(colon + 1);
    return SLACK_CHANNEL_PATTERN.test(channel) && SLACK_TS_PATTERN.test(ts) ? { kind: 'thread', channel, ts } : null;
  }
  const slash = address.indexOf('/');
  if (slash > 0) {
    const channel = address.slice(0, slash);
    const delivery = address.slice(slash + 1);
    return SLACK_CHANNEL_PATTERN.test(channel) && /^[0-9a-f-]{36}$/i.test(delivery) ? { kind: 'opening', channel, delivery } : null;
  }
  return null;
}
