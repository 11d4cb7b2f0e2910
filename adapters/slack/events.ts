import type { Address } from '../../domain/model.ts';
import { slackThreadAddress } from '../../domain/slack.ts';
import type { ChatChoice, ChatMessage, ChatPlacing } from '../../ports/chat-inbound.ts';
import { parseAnswerValue } from './blocks.ts';

/** A `message` or `app_mention` event (or a message read back from a thread), with the fields read here. */
export interface SlackMessageEvent {
  readonly type?: string;
  readonly channel?: string;
  readonly channel_type?: string;
  readonly user?: string;
  readonly bot_id?: string;
  readonly subtype?: string;
  readonly text?: string;
  readonly ts?: string;
  readonly thread_ts?: string;
}

/** A `block_actions` interaction, with the fields read here. */
export interface SlackBlockActions {
  readonly type?: string;
  readonly user?: { readonly id?: string };
  readonly channel?: { readonly id?: string };
  readonly container?: { readonly channel_id?: string; readonly message_ts?: string; readonly thread_ts?: string };
  readonly message?: { readonly ts?: string; readonly thread_ts?: string; readonly blocks?: unknown[] };
  readonly actions?: readonly { readonly action_id?: string; readonly value?: string; readonly action_ts?: string }[];
}

/** The action id of an ask's buttons (contract section 10). */
export const ANSWER_ACTION = 'console_answer';

/** What a message event is: nobody's directive (`ignored`), a direct message to the bot, or a message in a channel. */
export type ReadMessage =
  | { readonly kind: 'ignored' }
  | { readonly kind: 'direct'; readonly im: string; readonly sender: string; readonly text: string; readonly id: string }
  | { readonly kind: 'room'; readonly message: ChatMessage; readonly placing: ChatPlacing; readonly thread: string | null; readonly ts: string };

/** Slack's three escapes undone (`&lt;`, `&gt;`, `&amp;`; `&amp;` last, so `&amp;lt;` stays `&lt;`). */
export function unescapeSlack(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** The mentions of the bot in a message's text (`<@U…>` or `<@U…|name>`). */
function mentionPattern(botUserId: string): RegExp {
  return new RegExp(`<@${botUserId}(?:\\|[^>]*)?>`, 'g');
}

/**
 * A Slack message event in the chat-inbound protocol's terms (contract section 10): the sender is the
 * event's `user` (Slack asserts it: the socket is the app's, authenticated), never text in the message; a
 * bot's post (`bot_id`), the bot's own, and any `subtype` but `thread_broadcast` (edits, joins, deletions)
 * is nobody's directive. In a channel, the message's thread is its address; a message that mentions the bot
 * opens a thread there (its own, or the one it is in), named by it; its id is `<channel>:<ts>`.
 */
export function readMessage(channelId: string, botUserId: string, event: SlackMessageEvent): ReadMessage {
  const { channel, user, ts } = event;
  if (typeof channel !== 'string' || typeof user !== 'string' || typeof ts !== 'string') return { kind: 'ignored' };
  if (event.bot_id !== undefined || user === botUserId) return { kind: 'ignored' };
  if (event.subtype !== undefined && event.subtype !== 'thread_broadcast') return { kind: 'ignored' };
  const body = typeof event.text === 'string' ? event.text : '';
  if (body.trim() === '') return { kind: 'ignored' };
  const id = `${channel}:${ts}`;
  if (event.channel_type === 'im' || channel.startsWith('D')) return { kind: 'direct', im: channel, sender: user, text: unescapeSlack(body.trim()), id };
  const mention = mentionPattern(botUserId);
  const addressed = mention.test(body);
  // What the person wrote: Slack sends `&`, `<` and `>` escaped (its own markup stays markup: `<@U…>`, links).
  const text = unescapeSlack(addressed ? body.replace(mentionPattern(botUserId), '').trim() : body);
  const thread = event.thread_ts !== undefined && event.thread_ts !== '' ? event.thread_ts : null;
  const address: Address = { channel: channelId, id: thread === null ? channel : slackThreadAddress(channel, thread) };
  const opened = slackThreadAddress(channel, thread ?? ts);
  return {
    kind: 'room',
    message: { channel: channelId, address, opens: addressed ? { channel: channelId, id: opened } : null, sender: user, text, id },
    // A reply to a message outside a thread goes to the thread it would open (its own).
    placing: { place: channel, replyAt: opened },
    thread,
    ts,
  };
}

/** A click on an ask's button as a choice, with where the ask's message is; null: not one of the service's buttons. */
export function readChoice(channelId: string, actions: SlackBlockActions): { readonly choice: ChatChoice; readonly channel: string; readonly messageTs: string; readonly threadTs: string } | null {
  const action = actions.actions?.[0];
  const user = actions.user?.id;
  const channel = actions.channel?.id ?? actions.container?.channel_id;
  const messageTs = actions.message?.ts ?? actions.container?.message_ts;
  if (actions.type !== 'block_actions' || action?.action_id !== ANSWER_ACTION || typeof action.value !== 'string') return null;
  if (typeof user !== 'string' || typeof channel !== 'string' || typeof messageTs !== 'string') return null;
  const value = parseAnswerValue(action.value);
  if (value === null) return null;
  const threadTs = actions.message?.thread_ts ?? actions.container?.thread_ts ?? messageTs;
  return {
    choice: {
      channel: channelId,
      address: { channel: channelId, id: slackThreadAddress(channel, threadTs) },
      sender: user,
      pending_id: value.pending_id,
      option_id: value.option_id,
      id: `${channel}:${messageTs}:${action.action_ts ?? ''}`,
    },
    channel,
    messageTs,
    threadTs,
  };
}
