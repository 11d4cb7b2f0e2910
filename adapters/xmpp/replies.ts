import type { Element } from '@xmpp/client';
import { NS } from './stanzas.ts';

/**
 * The id of the message a room message replies to (XEP-0461 `<reply id=… to=…>`: in a room, the room's stanza id
 * of it, some clients give its own message id; `to`, its author's `room/nick`, when given), or null. What the sender wrote: it says where the message goes,
 * never who sent it, so a made-up id only sends a linked member's message to a conversation they may speak in.
 */
export function repliedTo(message: Element): { readonly id: string; readonly to: string | null } | null {
  const replies = message.getChildren('reply', NS.reply);
  const id = replies.length === 1 ? replies[0]!.attrs.id ?? null : null;
  return id === null || id === '' ? null : { id, to: replies[0]!.attrs.to ?? null };
}

/**
 * The body without the quote a reply carries for clients that do not show replies (XEP-0428 fallback for
 * XEP-0461: `<fallback for='urn:xmpp:reply:0'><body start end/></fallback>`, offsets in code points).
 */
export function replyText(message: Element, body: string): string {
  const ranges = message.getChildren('fallback', NS.fallback)
    .filter((fallback) => fallback.attrs.for === NS.reply)
    .flatMap((fallback) => fallback.getChildren('body'))
    .map((range) => [Number(range.attrs.start), Number(range.attrs.end)] as const)
    .filter(([start, end]) => Number.isInteger(start) && Number.isInteger(end) && start >= 0 && end > start);
  if (ranges.length === 0) return body;
  const points = Array.from(body);
  return points.filter((_, at) => !ranges.some(([start, end]) => at >= start && at < end)).join('');
}

/** The most of the bot's posts remembered: past it, the oldest are looked for in the room's archive instead. */
export const BOT_POSTS_MAX = 5_000;

/**
 * Which room thread each of the bot's posts went to, by the ids a reply may name it by (the room's stanza id and
 * the post's origin-id), from the room's echo of each post (live, or read back from the archive). Bounded: the
 * oldest go first.
 */
export function botPosts(max: number = BOT_POSTS_MAX) {
  const threads = new Map<string, string>();
  const key = (room: string, id: string) => `${room} ${id}`;
  return {
    record(room: string, ids: readonly (string | null)[], thread: string): void {
      for (const id of ids) {
        if (id === null || id === '') continue;
        threads.delete(key(room, id));
        threads.set(key(room, id), thread);
        while (threads.size > max) threads.delete(threads.keys().next().value!);
      }
    },
    /** The thread the bot's post `id` went to in `room`, or undefined when it is not known here. */
    threadOf: (room: string, id: string): string | undefined => threads.get(key(room, id)),
  };
}
