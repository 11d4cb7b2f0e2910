import type { LedgerSegment } from '../domain/ledger-visibility.ts';
import type { Conversation, Id, Thread } from '../domain/model.ts';
import type { NewConversation } from './move-writes.ts';

/**
 * A fork from a message (contract section 11): a new console thread of `owner`'s, `fork_of` the source
 * and `fork_cutoff` the message, with its first conversation. Ids are chosen by the caller.
 */
export interface NewFork {
  readonly id: Id;
  /** The caller: the fork is theirs, whoever owns the source. */
  readonly owner: string;
  readonly source_thread_id: Id;
  /** The message the fork is cut at: the last of the source's ledger it sees. */
  readonly cutoff: Id;
  /**
   * The source's ledger as its reader sees it (its own messages, its ancestors' up to the cutoffs):
   * the cutoff must be a message in it. The fork chain never changes once written, so it is read before.
   */
  readonly visible: readonly LedgerSegment[];
  readonly project: string | null;
  readonly title: string;
  /** Its first conversation; it lives at the thread itself, and carries no agent session. */
  readonly conversation: Omit<NewConversation, 'address'> & { readonly id: Id };
}

/** The outcome of a fork: written, or refused because the cutoff is no message of the source's visible ledger. */
export type ForkOutcome =
  | { readonly kind: 'forked'; readonly thread: Thread; readonly conversation: Conversation }
  /** The cutoff is no message, or a message the source's ledger does not show: nothing was written. */
  | { readonly kind: 'not_in_ledger' };

/** Forks from a message, each one transaction. */
export interface ForkWrites {
  /**
   * Writes the fork's thread (key null, on the console, no members) and its conversation atomically,
   * after checking that the cutoff is a message within `visible`; else answers `not_in_ledger` and
   * writes nothing. The source is not locked: a fork reads what is written already and changes nothing of it.
   */
  createFork(fork: NewFork): Promise<ForkOutcome>;
}
