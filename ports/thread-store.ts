import type { ForkLink } from '../domain/ledger-visibility.ts';
import type { Conversation, Id, Page, PageRequest, Thread, ThreadListItem } from '../domain/model.ts';

/** A thread the caller may use, with the fork chain (the thread, then its ancestors) its ledger needs. */
export interface AccessibleThread {
  readonly row: Thread;
  readonly chain: readonly ForkLink[];
}

/** What the thread list keeps (contract section 4, "Managing threads"). */
export interface ThreadListFilter {
  /** true: the archived threads only; false: the others only. */
  readonly archived: boolean;
  /**
   * The search's words (domain/thread-search.ts `searchWords`: lower case, letters and digits): a thread is
   * kept when each begins a word of its title or of its own ledger's messages (not those a fork inherits:
   * the parent's text is matched on the parent). Empty: no search.
   */
  readonly words: readonly string[];
}

/** The list's filter when none is asked for: the threads not archived, unsearched. */
export const UNARCHIVED: ThreadListFilter = Object.freeze({ archived: false, words: Object.freeze([]) });

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
  /**
   * What `findRow` answers, with the thread's latest conversation (as `ConversationStore.latestByThread` answers
   * it, null when it has none), read together: a directive's first read, in one statement. Null, and no
   * conversation read, when the user cannot read the thread.
   */
  findRowWithLatest(userId: string, threadId: Id): Promise<{ readonly row: Thread; readonly latest: Conversation | null } | null>;
  /** Whether a thread row with this id exists at all, whoever may read it (the live socket tells a row from a key). */
  exists(threadId: Id): Promise<boolean>;
  /**
   * The threads the user owns or is a member of that `filter` keeps (absent: {@link UNARCHIVED}), newest
   * first, each with its activity (a turn running, items pending). A search reads only the text of threads
   * the user can read: it never finds, nor matches on, any other.
   */
  listAccessible(userId: string, page: PageRequest, filter?: ThreadListFilter): Promise<Page<ThreadListItem>>;
}
