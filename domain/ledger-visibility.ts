import type { Id } from './model.ts';

/** One link of a fork chain: a thread, the thread it forks, and the last parent message it sees. */
export interface ForkLink {
  readonly id: Id;
  readonly fork_of: Id | null;
  readonly fork_cutoff: Id | null;
}

/** A slice of a ledger: one thread's messages up to a message id (inclusive), or all when `upTo` is null. */
export interface LedgerSegment {
  readonly thread_id: Id;
  readonly upTo: Id | null;
}

/** UUIDv7 ids sort by time as text; ids are stored lower case. */
const minId = (a: Id | null, b: Id | null): Id | null => (a === null ? b : b === null ? a : a < b ? a : b);

/**
 * The segments a thread's ledger is made of: all of its own messages, then each ancestor's up to
 * the tightest cutoff on the way (a fork of a fork sees the grandparent only up to both cutoffs).
 * `chain` is the thread followed by its ancestors, nearest first; a link whose parent is missing
 * from the chain, or a cycle, ends it. A fork without a cutoff sees nothing of its parent.
 */
export function ledgerSegments(chain: readonly ForkLink[]): LedgerSegment[] {
  const first = chain[0];
  if (first === undefined) return [];
  const byId = new Map(chain.map((link) => [link.id, link]));
  const segments: LedgerSegment[] = [{ thread_id: first.id, upTo: null }];
  const seen = new Set([first.id]);
  let link = first;
  let bound: Id | null = null;
  while (link.fork_of !== null && link.fork_cutoff !== null) {
    const parent = byId.get(link.fork_of);
    if (parent === undefined || seen.has(parent.id)) break;
    bound = minId(bound, link.fork_cutoff);
    segments.push({ thread_id: parent.id, upTo: bound });
    seen.add(parent.id);
    link = parent;
  }
  return segments;
}

/** Whether a message of `thread_id` is in the ledger the segments describe. */
export function isInLedger(segments: readonly LedgerSegment[], message: { readonly thread_id: Id; readonly id: Id }): boolean {
  return segments.some(
    (segment) => segment.thread_id === message.thread_id && (segment.upTo === null || message.id <= segment.upTo),
  );
}
