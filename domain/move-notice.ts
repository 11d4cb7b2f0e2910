/**
 * What people in a chat place read when a conversation lands there by teleport: who moved it, from
 * where, and the gist of its last exchange, in plain words. The agent's brief (domain/history-brief.ts)
 * is the agent's: it is never posted, since its framing speaks to the agent, not to the room.
 */
import type { BriefMessage } from './history-brief.ts';

/** The bounds of a notice (docs/channels.md states them): each quoted message, and the notice as a whole. */
export const MOVE_NOTICE_LIMITS = Object.freeze({ perMessage: 280, characters: 1_000 });

/** What a notice says. */
export interface MoveNoticeInput {
  /** Who moved it: the console user's name. */
  readonly mover: string;
  /** The thread's title. */
  readonly title: string;
  /** The agent whose conversation it is: its replies are said to be its. */
  readonly agent: string;
  /** The name of the channel it came from. */
  readonly from: string;
  /**
   * Whether the platform heads the post with the title already (a delivery that opens a new thread):
   * then the notice does not say it again.
   */
  readonly titled: boolean;
  /** The thread's recent ledger, newest first, as a page reads it. */
  readonly newestFirst: readonly BriefMessage[];
}

/** A text on one line, Markdown's line marks and backticks left out, cut to `max` (never inside a surrogate pair). */
export function plainLine(text: string, max: number): string {
  const line = text
    .replace(/`+/g, '')
    .replace(/^\s*(#{1,6}|>|[-*+]|\d+\.)\s+/gm, '')
    .replace(/\*\*|__/g, '')
    .replace(/\s+/g, ' ')
    .trim();
  return cut(line, max);
}

/**
 * The last exchange of a ledger (newest first): the newest agent reply and the person's message it
 * answered, oldest first; the newest person's message alone when nothing answered it yet; none when
 * the ledger has neither. The service's own lines (`system`) are no part of it.
 */
export function lastExchange(newestFirst: readonly BriefMessage[]): BriefMessage[] {
  const spoken = newestFirst.filter((message) => (message.role === 'user' || message.role === 'assistant') && message.text.trim() !== '');
  const newest = spoken[0];
  if (newest === undefined) return [];
  if (newest.role === 'user') return [newest];
  const asked = spoken.find((message) => message.role === 'user');
  return asked === undefined ? [newest] : [asked, newest];
}

/**
 * The notice posted with a teleport: "<mover> moved the conversation[ "<title>"] here from <channel>.",
 * then "Last exchange:" and its messages, each on its own line and cut to its bound. Plain text, at most
 * {@link MOVE_NOTICE_LIMITS}.characters long.
 */
export function moveNotice(input: MoveNoticeInput, limits = MOVE_NOTICE_LIMITS): string {
  const title = plainLine(input.title, 120);
  const head = `${plainLine(input.mover, 80)} moved the conversation${input.titled || title === '' ? '' : ` "${title}"`} here from ${plainLine(input.from, 80)}.`;
  const exchange = lastExchange(input.newestFirst).map((message) => `${message.role === 'user' ? 'Asked' : `${plainLine(input.agent, 80)} answered`}: ${plainLine(message.text, limits.perMessage)}`);
  const notice = exchange.length === 0 ? head : [head, 'Last exchange:', ...exchange].join('\n');
  return cut(notice, limits.characters);
}

/** A text cut to at most `max` UTF-16 units, ended with `…` when cut, never between the halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 2)) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}
