import type { ForkLink } from '../domain/ledger-visibility.ts';
import type { Id, Page, PageRequest, Thread, ThreadListItem } from '../domain/model.ts';

/** A thread the caller may use, with the fork chain (the thread, then its ancestors) its ledger needs. */
export interface AccessibleThread {
  readonly row: Thread;
  readonly chain: readonly ForkLink[];
}

/** Thread rows, always read for a user: an inaccessible thread is indistinguishable from an unknown one. */
export interface ThreadStore {
  /**
   * The thread when the user owns it or is a member, else null. One read: the row and its fork
   * chain, never its messages or conversations.
   */
  findAccessible(userId: string, threadId: Id): Promise<AccessibleThread | null>;
  /**
   * The thread row when the user owns it or is a member, else null: the row alone (a primary-key
   * probe and a membership probe), without the fork chain. What every read that answers the row, or
   * something under the thread but not its ledger, asks (the spec: those reads want the row only).
   */
  findRow(userId: string, threadId: Id): Promise<Thread | null>;
  /** Whether a thread row with this id exists at all, whoever may read it (the live socket tells a row from a key). */
  exists(threadId: Id): Promise<boolean>;
  /** The threads the user owns or is a member of, newest first, each with its activity (a turn running, items pending). */
  listAccessible(userId: string, page: PageRequest): Promise<Page<ThreadListItem>>;
}
