import { setTimeout as sleep } from 'node:timers/promises';
import type { SlackChannelPort } from '../../adapters/slack/channel-port.ts';

/** What a person sees of a message: its sections' text (or its text), with Slack's three escapes undone. */
export function shownText(message: { text?: string; blocks?: unknown }): string {
  const sections = Array.isArray(message.blocks)
    ? (message.blocks as { type?: string; text?: { text?: string } }[]).filter((b) => b.type === 'section').map((b) => b.text?.text ?? '')
    : [];
  const raw = sections.length > 0 ? sections.join('') : (message.text ?? '');
  return raw.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Where an address posts: a channel, or a thread of it. */
export function where(at: string): { channel: string; thread: string | undefined } {
  const colon = at.indexOf(':');
  return colon < 0 ? { channel: at, thread: undefined } : { channel: at.slice(0, colon), thread: at.slice(colon + 1) };
}

/** The port's socket connected and the bot known. */
export async function online(port: SlackChannelPort, ms = 15_000): Promise<SlackChannelPort> {
  for (const end = Date.now() + ms; !port.connection.online;) {
    if (Date.now() > end) throw new Error('the slack bot did not come online');
    await sleep(25);
  }
  return port;
}
