import type { ChannelPlace } from '../../domain/model.ts';
import { parseSlackAddress, slackThreadAddress } from '../../domain/slack.ts';
import type { SlackConnection } from './connection.ts';

/** A Slack conversation as `conversations.list` answers it (the fields read here). */
export interface SlackChannelFacts {
  readonly id: string;
  readonly name?: string;
  readonly is_member?: boolean;
  readonly is_archived?: boolean;
  readonly is_read_only?: boolean;
  readonly is_private?: boolean;
}

/** A message as `conversations.history` and `conversations.replies` answer it (the fields read here). */
export interface SlackMessage {
  readonly ts: string;
  readonly thread_ts?: string;
  readonly user?: string;
  readonly bot_id?: string;
  readonly subtype?: string;
  readonly text?: string;
  readonly reply_count?: number;
  readonly metadata?: { readonly event_type?: string; readonly event_payload?: Record<string, unknown> };
}

/** At most this many pages of channels are listed (200 each): a workspace's bot is in far fewer. */
const LIST_PAGES = 10;

/** `conversations.list` of `types`, page by page (at most {@link LIST_PAGES}). */
async function listConversations(connection: SlackConnection, args: Record<string, unknown>): Promise<SlackChannelFacts[]> {
  const found: SlackChannelFacts[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < LIST_PAGES; page++) {
    const answer = await connection.call<{ channels?: SlackChannelFacts[]; response_metadata?: { next_cursor?: string } }>('conversations.list', {
      ...args, limit: 200, ...(cursor === undefined ? {} : { cursor }),
    });
    found.push(...(answer.channels ?? []));
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (cursor === undefined) break;
  }
  return found;
}

/** The public and private channels the bot is a member of. */
export async function memberChannels(connection: SlackConnection): Promise<SlackChannelFacts[]> {
  const listed = await listConversations(connection, { types: 'public_channel,private_channel', exclude_archived: false });
  return listed.filter((channel) => channel.is_member === true);
}

/** The bot's direct conversations (`im`), each person's with the bot. */
export function directChannels(connection: SlackConnection): Promise<SlackChannelFacts[]> {
  return listConversations(connection, { types: 'im' });
}

/** Why no conversation can land in a channel, or null when one can: the bot must be able to post there. */
export function barredReason(channel: SlackChannelFacts): string | null {
  if (channel.is_archived === true) return 'The channel is archived';
  if (channel.is_read_only === true) return 'The bot cannot post in this channel (it is read-only)';
  return null;
}

/** A channel as a top-level place: it opens (`inside` is its id) on its threads. */
export function channelPlace(channel: SlackChannelFacts, threads: readonly ChannelPlace[]): ChannelPlace {
  return { id: channel.id, name: `#${channel.name ?? channel.id}`, shared: true, inside: channel.id, barred: barredReason(channel), children: threads };
}

/** A thread's name from its first message: its first line, cut to 80 characters. */
export function threadName(ts: string, text: string | undefined): string {
  const line = (text ?? '').split('\n', 1)[0]!.trim();
  if (line === '') return `Thread ${ts}`;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * A channel's threads as places: those where conversations live (named by their thread's title), then its
 * recent threads (messages with replies, named by their first line), each once.
 */
export async function channelThreads(
  connection: SlackConnection,
  channel: SlackChannelFacts,
  living: readonly { address: string; title: string }[],
): Promise<ChannelPlace[]> {
  const barred = barredReason(channel);
  const places = new Map<string, ChannelPlace>();
  const add = (ts: string, name: string) => {
    const id = slackThreadAddress(channel.id, ts);
    if (!places.has(id)) places.set(id, { id, name, shared: true, inside: null, barred, children: [] });
  };
  for (const { address, title } of living) {
    const parsed = parseSlackAddress(address);
    if (parsed?.kind === 'thread' && parsed.channel === channel.id) add(parsed.ts, title);
  }
  const history = await connection.call<{ messages?: SlackMessage[] }>('conversations.history', { channel: channel.id, limit: 100 });
  for (const message of history.messages ?? []) {
    if ((message.reply_count ?? 0) > 0) add(message.ts, threadName(message.ts, message.text));
  }
  return [...places.values()];
}
