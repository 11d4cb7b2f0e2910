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

/** One ledger line: its role and its text, cut to the per-message bound. */
function line(message: BriefMessage, perMessage: number): string {
  const text = message.text.length > perMessage ? `${message.text.slice(0, perMessage)}…` : message.text;
  return `[${message.role}] ${text}`;
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
