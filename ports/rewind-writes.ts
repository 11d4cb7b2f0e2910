import type { Id, Message } from '../domain/model.ts';

/** One run of a thread as a rewind or a fork weighs it: its conversation, the ledger message that started it (null when none did), whether it is rewound, and whether it ended. */
export interface ThreadRun {
  readonly id: Id;
  readonly conversation_id: Id;
  readonly message_id: Id | null;
  readonly rewound: boolean;
  /** Whether the run has ended (its status is no longer `running`): its checkpoint, when one is kept, is taken. */
  readonly ended: boolean;
}

/** The files a rewind is putting back: the first run it took back, and the checkpoint's commit. Kept until the worktree holds it. */
export interface PendingRestore {
  readonly run_id: Id;
  readonly commit: string;
}

/** A rewind as the use case decided it (contract section 11). */
export interface NewRewind {
  readonly thread_id: Id;
  /** The first run taken back: it and every later run of the thread (by id, any conversation) read rewound. */
  readonly run_id: Id;
  /** The checkpoint the worktree goes back to; null on a thread with no worktree (its files are not the service's). */
  readonly restore: string | null;
  /** The ledger line that says so, appended (not rewound) with the marks. */
  readonly note: { readonly id: Id; readonly text: string };
}

/** The outcome of a rewind's write. */
export type RewindOutcome =
  /** Marked: the runs taken back (oldest first), the conversations whose agent session was dropped, and the note as written. */
  | { readonly kind: 'rewound'; readonly runs: readonly Id[]; readonly note: Message }
  /** A turn runs, or a directive waits, on the thread: nothing was written. */
  | { readonly kind: 'turn_running' | 'queue_not_empty' }
  /** The run is no run of the thread: nothing was written. */
  | { readonly kind: 'not_found' }
  /** The run was rewound already (a retry, or a rewind to before an earlier run): nothing was written. */
  | { readonly kind: 'rewound_already' };

/** Rewinds of a thread's runs, each one transaction. */
export interface RewindWrites {
  /** The runs of every conversation of the thread, oldest first. */
  threadRuns(threadId: Id): Promise<ThreadRun[]>;
  /**
   * Under the thread's lock, with no turn running and nothing queued: marks the run and every later run of the
   * thread rewound, and the ledger messages they wrote or were started by (the thread's own messages from the
   * run's start on, and the runs' own prompts); drops the agent session of every conversation that ran one, so
   * its next turn starts a fresh one from the history brief of what is left; journals the restore (replacing
   * any earlier one) and appends the note. All or nothing.
   */
  rewind(rewind: NewRewind): Promise<RewindOutcome>;
  /** The restore a rewind journaled for the thread and no worktree holds yet, or null. */
  pendingRestore(threadId: Id): Promise<PendingRestore | null>;
  /** Forgets the thread's journaled restore once its worktree holds `commit` (a newer rewind's journal is kept). */
  restored(threadId: Id, commit: string): Promise<void>;
}
