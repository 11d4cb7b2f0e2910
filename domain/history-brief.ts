/**
 * The brief an agent starts from when it cannot continue a session that knows the thread: a summoned
 * agent, a teleported conversation whose agent could not resume its session, an agent whose session
 * was lost. The thread's recent ledger, oldest first, within bounds, then the turn's own prompt.
 */

/** How much history a brief carries: the newest messages that fit both bounds (docs/api.md states them). */
export const HISTORY_BRIEF_LIMITS = Object.freeze({ messages: 30, characters: 12_000, perMessage: 2_000 });

export interface BriefMessage {
  readonly role: string;
  readonly text: string;
}

export const HISTORY_HEADER = 'Context: this conversation continues a thread you have not seen in this session. Its recent messages, oldest first:';
export const HISTORY_FOOTER = 'The new message follows.';

/** A text cut to `max` UTF-16 units, never between the two halves of a surrogate pair. */
function cut(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

/**
 * One ledger entry: its role, then its text cut to the per-message bound, its own line breaks indented,
 * so no message can start a line that reads as another entry (`[system] …`).
 */
function line(message: BriefMessage, perMessage: number): string {
  return `[${message.role}] ${cut(message.text, perMessage).replace(/\r?\n/g, '\n  ')}`;
}

/**
 * The history part of a brief from the ledger's messages (newest first, as a page reads them), or
 * null when there is none. The newest messages are kept: older ones are left out first, and the
 * brief says so when any were. The result never exceeds `characters` plus the fixed lines.
 */
export function historyBrief(newestFirst: readonly BriefMessage[], limits = HISTORY_BRIEF_LIMITS): string | null {
  const kept: string[] = [];
  let size = 0;
  for (const message of newestFirst) {
    if (kept.length >= limits.messages) break;
    const next = line(message, limits.perMessage);
    if (size + next.length + 1 > limits.characters) break;
    kept.push(next);
    size += next.length + 1;
  }
  if (kept.length === 0) return null;
  const omitted = newestFirst.length > kept.length ? ['(older messages left out)'] : [];
  return [HISTORY_HEADER, ...omitted, ...kept.reverse(), HISTORY_FOOTER].join('\n');
}

/** The prompt a fresh session gets: the history brief, then the turn's own text. */
export const briefedPrompt = (history: string, prompt: string): string => `${history}\n\n${prompt}`;
