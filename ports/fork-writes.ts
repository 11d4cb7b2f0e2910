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

/** The outcome of a fork: written, or refused because the cutoff is no message of the source's visible ledger, or is not final yet. */
export type ForkOutcome =
  | { readonly kind: 'forked'; readonly thread: Thread; readonly conversation: Conversation }
  /** The cutoff is no message, or a message the source's ledger does not show: nothing was written. */
  | { readonly kind: 'not_in_ledger' }
  /**
   * The cutoff's run (domain/worktree.ts `runOfMessage`, among the runs of the cutoff's own thread) has not ended
   * (`turn_running`), or the cutoff is a directive still waiting in that thread's queue, its run not begun
   * (`queue_not_empty`): its replies and files are not final, and its checkpoint is not taken. Nothing was written.
   */
  | { readonly kind: 'turn_running' | 'queue_not_empty' };

/** Forks from a message, each one transaction. */
export interface ForkWrites {
  /**
   * Writes the fork's thread (key null, on the console, no members) and its conversation atomically,
   * after checking that the cutoff is a message within `visible` (else `not_in_ledger`), and, holding the cutoff
   * thread's row so no run of it starts meanwhile, that the cutoff's run has ended and the cutoff waits in no queue
   * (else `turn_running` or `queue_not_empty`); a refusal writes nothing. The fork changes nothing of the source.
   */
  createFork(fork: NewFork): Promise<ForkOutcome>;
}
