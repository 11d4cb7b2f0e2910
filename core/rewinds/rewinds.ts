import type { Failure } from '../../domain/errors.ts';
import type { Thread, User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { checkpointBefore } from '../../domain/worktree.ts';
import type { NewId } from '../../ports/new-id.ts';
import type { RewindWrites } from '../../ports/rewind-writes.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { Emit } from '../runs/emit.ts';

/** The answer of a rewind (200): the checkpoint the worktree went back to, or null on a thread with no worktree. */
export interface Rewound {
  readonly restored: string | null;
}

/** The ledger line a rewind appends. */
export const REWOUND_NOTE = 'The thread was rewound: the runs from here on are kept but taken back, and the agent starts a new session from a brief of what is left.';

const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path, message }] });

/**
 * Puts a thread's worktree back to what its rewind journaled and forgets the journal: after the rewind's own
 * write, and before any turn or read of a thread a crash left with one (the run directory calls it).
 */
export function rewindRestores(deps: { readonly writer: Pick<RewindWrites, 'pendingRestore' | 'restored'>; readonly worktrees: Pick<Worktrees, 'restore'> }) {
  return async function settle(thread: Pick<Thread, 'id' | 'worktree'>): Promise<Result<null, Failure>> {
    if (thread.worktree === null) return ok(null);
    const pending = await deps.writer.pendingRestore(thread.id);
    if (pending === null) return ok(null);
    const restored = await deps.worktrees.restore(thread.worktree, { commit: pending.commit, runId: pending.run_id });
    if (!restored.ok) return restored;
    await deps.writer.restored(thread.id, pending.commit);
    return ok(null);
  };
}

export type SettleRewind = ReturnType<typeof rewindRestores>;

/**
 * Rewind to before a run (contract section 11), by the thread's owner while nothing runs or waits: the run and
 * every later one read rewound (kept), the ledger messages they wrote are left out of later briefs, the agent
 * sessions that saw them are dropped (the next turn starts fresh from the brief of what is left), and on a
 * repository thread the worktree goes back to the checkpoint before that run. The marks and the journal of the
 * restore are one write; the restore follows, and a crash in between is finished by the thread's next turn or
 * read (its run directory settles it). A retry of a rewind done answers the same, writing nothing.
 */
export function threadRewinds(deps: {
  readonly storage: { readonly threads: ThreadStore; readonly writer: RewindWrites };
  readonly worktrees: Pick<Worktrees, 'checkpoints' | 'restore'>;
  /** Checks (and repairs) the worktree before its checkpoints are read, as before a turn; finishes a journaled restore (rewindRestores). */
  readonly runDirectory: RunDirectory;
  readonly newId: NewId;
  readonly emit: Emit;
}) {
  const { storage } = deps;
  /** The journaled restore finished (the run directory settles it, on this instance's worktree), answered as `restored`. */
  const settledAs = async (thread: Thread, restored: string): Promise<Result<Rewound, Failure>> => {
    const located = await deps.runDirectory(thread);
    return located.ok ? ok({ restored }) : located;
  };
  return async function rewind(user: User, threadId: string, body: { readonly run_id: string }): Promise<Result<Rewound, Failure>> {
    const thread = await storage.threads.findRow(user.id, threadId);
    if (thread === null) return fail({ code: 'thread_unavailable' });
    if (thread.owner !== user.id) return fail({ code: 'not_thread_owner' });
    const runs = await storage.writer.threadRuns(thread.id);
    if (!runs.some((run) => run.id === body.run_id)) return fail(invalid('body.run_id', 'is not a run of this thread'));
    let restore: string | null = null;
    if (thread.worktree !== null) {
      const located = await deps.runDirectory(thread);
      if (!located.ok) return located;
      const checkpoints = await deps.worktrees.checkpoints({ ...thread.worktree, path: located.value });
      if (!checkpoints.ok) return checkpoints;
      restore = checkpointBefore(runs, body.run_id, checkpoints.value);
      if (restore === null) return fail({ code: 'checkpoint_unavailable' });
    }
    const written = await storage.writer.rewind({ thread_id: thread.id, run_id: body.run_id, restore, note: { id: deps.newId(), text: REWOUND_NOTE } });
    switch (written.kind) {
      case 'turn_running':
      case 'queue_not_empty':
        return fail({ code: written.kind });
      case 'not_found':
        return fail(invalid('body.run_id', 'is not a run of this thread'));
      case 'rewound_already':
        // A retry answers as the rewind did; once the thread went on (a run since that is not rewound), it is no retry.
        if (runs.some((run) => run.id > body.run_id && !run.rewound)) return fail({ code: 'run_rewound' });
        return restore === null ? ok({ restored: null }) : settledAs(thread, restore);
      case 'rewound':
    }
    await deps.emit(thread.id, 'message', { run_id: null, message: written.note });
    await deps.emit(thread.id, 'rewound', { run_id: body.run_id, runs: written.runs, restored: restore });
    return restore === null ? ok({ restored: null }) : settledAs(thread, restore);
  };
}

export type ThreadRewind = ReturnType<typeof threadRewinds>;
