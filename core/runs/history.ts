import { HISTORY_BRIEF_LIMITS, historyBrief, type BriefMessage } from '../../domain/history-brief.ts';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import type { Id } from '../../domain/model.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';

/**
 * The brief of a thread's recent ledger as `userId` sees it (its fork chain walked, what a rewind took back left
 * out), of the messages before `before` (a turn's own message is not its own history), or null when there are none.
 */
export async function threadHistory(storage: { readonly threads: ThreadStore; readonly ledger: LedgerStore }, userId: string, threadId: Id, before: Id | null): Promise<string | null> {
  const found = await storage.threads.findAccessible(userId, threadId);
  if (found === null) return null;
  // One more than a brief takes, so the brief can say that older messages were left out.
  // What a rewind took back is no part of any brief.
  const page = await storage.ledger.page(ledgerSegments(found.chain), { limit: HISTORY_BRIEF_LIMITS.messages + 1, before }, { live: true });
  return historyBrief(page.items);
}

/** The ledger line of a fork's first turn: its agent starts a session of its own from the history up to the fork. */
export const FORK_BRIEFED = "This thread is a fork: its agent starts a session of its own from a brief of the history up to where it was forked.";

/** The ledger line of a fork's first turn whose agent forked the source's session (ACP `session/fork`): it knows the history as it was. */
export const FORKED = "This thread is a fork: its agent continues a copy of the source thread's session, as it was where this thread was forked.";

/** The newest `limit` messages of a thread's ledger as `userId` sees it (newest first; what a rewind took back left out), or none. */
export async function recentLedger(storage: { readonly threads: ThreadStore; readonly ledger: LedgerStore }, userId: string, threadId: Id, limit: number): Promise<readonly BriefMessage[]> {
  const found = await storage.threads.findAccessible(userId, threadId);
  if (found === null) return [];
  return (await storage.ledger.page(ledgerSegments(found.chain), { limit, before: null }, { live: true })).items;
}
