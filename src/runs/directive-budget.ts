import type { WindowLimiter } from '../limits/window-limiter.ts';
import { problem, type Reply } from '../http/reply.ts';

/**
 * Spends one of a user's directives of the minute (DIRECTIVES_PER_MINUTE). A directive, an edit of a
 * queued one and a review of a thread's changes each write a text an agent will be prompted with and
 * an event every open thread replays, so all three draw on the one budget: edits were unlimited, and
 * 300 of 100 KB in seconds each stored a replayed event. The refusal once it is spent (429
 * `too_many_directives` with `Retry-After`), else null; without a limiter, no limit.
 */
export function spendDirective(budget: WindowLimiter | undefined, userId: string): Reply | null {
  if (budget === undefined) return null;
  const wait = budget.blocked(userId);
  if (wait !== null) return problem({ code: 'too_many_directives' }, { 'retry-after': String(wait) });
  budget.record(userId);
  return null;
}
