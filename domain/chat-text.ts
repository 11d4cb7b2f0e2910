import type { Pending } from './model.ts';
import type { PendingReply } from './pending-answers.ts';

/**
 * What a chat channel posts and reads for a conversation living there (contract section 9): replies
 * split to fit a message, asks with numbered options, and a person's reply read as an answer or a stop.
 */

/** The most characters one chat message carries; a longer reply is posted in parts. */
export const CHAT_MESSAGE_LIMIT = 4_000;

/** The longest text a person's chat message may give the agent (what a directive over HTTP may carry). */
export const CHAT_TEXT_LIMIT = 100_000;

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * `text` in parts of at most `limit` UTF-16 code units, joined they give `text` back: cut at the last
 * line break (else space) of the second half of a part when there is one, and never inside a
 * surrogate pair. An empty text has no part.
 */
export function chatParts(text: string, limit: number = CHAT_MESSAGE_LIMIT): string[] {
  if (limit < 2) throw new RangeError('a part holds at least two code units');
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = limit;
    const window = rest.slice(Math.floor(limit / 2), limit);
    const breakAt = Math.max(window.lastIndexOf('\n'), window.lastIndexOf(' '));
    if (breakAt >= 0) cut = Math.floor(limit / 2) + breakAt + 1;
    // A high surrogate ending the part would be split from its low one.
    if (isHigh(rest.charCodeAt(cut - 1))) cut -= 1;
    parts.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest !== '') parts.push(rest);
  return parts;
}

/** An approval or a question as a chat message: its title, then each option numbered from 1. */
export function askText(pending: Pick<Pending, 'kind' | 'title' | 'options'>): string {
  const head = pending.kind === 'approval' ? `Approval needed: ${pending.title}` : `Question: ${pending.title}`;
  const options = pending.options.map((option, index) => `${index + 1}. ${option.name}`);
  const how = pending.options.length > 0
    ? 'Reply with a number or an option\'s name.'
    : 'Reply with your answer.';
  return [head, ...options, how].join('\n');
}

/** Whether a person's chat text asks to stop the running turn. */
export function isStopRequest(text: string): boolean {
  return /^\s*stop[.!]?\s*$/i.test(text);
}

/**
 * A person's chat text as the answer to a pending item: a number picks that option (from 1), an
 * option's name picks it (case and surrounding space ignored); a question without such a match takes
 * the text itself. Null: the text answers nothing (it is a message for the agent).
 */
export function answerFromChat(pending: Pick<Pending, 'id' | 'kind' | 'options'>, text: string): PendingReply | null {
  const said = text.trim();
  if (/^\d{1,3}$/.test(said)) {
    const option = pending.options[Number(said) - 1];
    if (option !== undefined) return { id: pending.id, option: option.id };
  }
  const named = pending.options.find((option) => option.name.trim().toLowerCase() === said.toLowerCase() && said !== '');
  if (named !== undefined) return { id: pending.id, option: named.id };
  if (pending.kind === 'question' && said !== '') return { id: pending.id, answer: said };
  return null;
}

/** The text after the bot's nick when a chat message addresses it (`nick: …`, `nick, …`), else null. */
export function addressedText(body: string, nick: string): string | null {
  const trimmed = body.trimStart();
  if (trimmed.slice(0, nick.length).toLowerCase() !== nick.toLowerCase()) return null;
  const rest = /^\s*[:,]\s*/.exec(trimmed.slice(nick.length));
  return rest === null ? null : trimmed.slice(nick.length + rest[0].length);
}

/**
 * The ids this service posts with on a chat platform: UUIDv7 (deliveries, a turn's posts) and the v8 ids
 * its adapters derive for replies. A sender whose message carries one is a bot of this kind (another
 * console): never answered, so two bots never talk to each other. People's clients use v4 ids, or none.
 */
export function isConsoleOrigin(id: string): boolean {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-[78][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i.test(id);
}
