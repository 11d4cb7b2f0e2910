import type { Address, Conversation, Thread, Worktree } from '../domain/model.ts';

/**
 * A new thread and its first conversation, written together: a console thread (a directive's key), or
 * a thread a chat message opened on its channel (keyed by the address it lives at there).
 */
export interface NewConsoleThread {
  readonly owner: string;
  /** The thread's channel; absent: the console. */
  readonly channel?: string;
  readonly key: string;
  readonly project: string | null;
  readonly title: string;
  readonly conversation: {
    readonly agent: string;
    readonly model: string | null;
    readonly permission_mode: string | null;
    readonly effort: string | null;
    /** Where it lives on a chat channel; absent on the console (a console conversation lives at its thread). */
    readonly address?: Address | null;
  };
}

/** Console threads by the key their first directive carries (scoped to the owner). */
export interface ConsoleThreads {
  /** The caller's console thread with this key, or null. */
  findByKey(owner: string, key: string): Promise<Thread | null>;
  /**
   * Creates the console thread for `(owner, key)` with its conversation; when a concurrent call
   * created it first, answers that one (one thread per key, whatever the race).
   */
  createConsoleThread(thread: NewConsoleThread): Promise<{ thread: Thread; conversation: Conversation }>;
  /**
   * Records the thread's worktree when it has none; answers the one recorded (the first recorded
   * stays, whoever records second), or null when there is no such thread.
   */
  setWorktree(threadId: string, worktree: Worktree): Promise<Worktree | null>;
}
