import type { Id, Thread } from '../domain/model.ts';

/** What a thread's owner may change (contract section 4, "Managing threads"); a field left out is unchanged. */
export interface ThreadChanges {
  /** Trimmed, 1 to 200 characters, no control character (domain/thread-title.ts `isValidTitle`). */
  readonly title?: string;
  readonly archived?: boolean;
}

/** The owner's edits of a thread row. */
export interface ThreadEdits {
  /**
   * Applies `changes` to the thread when `owner` owns it, in one statement (the owner check is part of the
   * write); answers the row as it is after, or null when there is no such thread of that owner.
   */
  editThread(owner: string, threadId: Id, changes: ThreadChanges): Promise<Thread | null>;
}
