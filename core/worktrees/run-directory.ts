import { ok } from '../../domain/result.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { Logger } from '../../ports/logger.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ProjectDirectory, RunDirectory } from '../../ports/run-directory.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import type { SettleRewind } from '../rewinds/rewinds.ts';
import type { RewindWrites } from '../../ports/rewind-writes.ts';
import { checkpointAt } from '../../domain/worktree.ts';
import type { Thread } from '../../domain/model.ts';

/** How far up a fork chain a new worktree looks for a branch to start from. */
const MAX_FORK_DEPTH = 16;

/**
 * A thread's run directory (contract section 8): on a repository project, the thread's own worktree,
 * made (or repaired) before each turn and recorded on the thread the first time, from the base the
 * thread recorded then (a fork's from its parent's checkpoint at the cutoff, else its branch), a rewind a crash interrupted finished first; on any
 * other project, the project's directory.
 */
export function threadDirectories(deps: {
  readonly catalog: Pick<Catalog, 'project'>;
  readonly threads: Pick<ConsoleThreads, 'setWorktree'>;
  /** A fork's parent row, read as the fork's owner (who could read the source when it was made). */
  readonly rows: Pick<ThreadStore, 'findRow'>;
  readonly worktrees: Worktrees;
  readonly projectDirectory: ProjectDirectory;
  /** Finishes a rewind whose files are not yet restored (core/rewinds): nothing runs, and nothing is read, before. */
  readonly settle?: SettleRewind;
  /** A fork's source's runs: which of its checkpoints the fork's cutoff is at. */
  readonly runs?: Pick<RewindWrites, 'threadRuns'>;
}): RunDirectory {
  /** The checkpoint of the fork's parent at its cutoff (contract section 11), or null: none kept, or no fork. */
  async function checkpointOfCutoff(thread: Pick<Thread, 'owner' | 'fork_of' | 'fork_cutoff'>): Promise<string | null> {
    if (deps.runs === undefined || thread.fork_of === null || thread.fork_cutoff === null) return null;
    const parent = await deps.rows.findRow(thread.owner, thread.fork_of);
    if (parent?.worktree == null) return null;
    // The parent's worktree on this instance (made here when another made it: its checkpoints fetched on a clone).
    const located = await directory(parent);
    if (!located.ok) return null;
    const listed = await deps.worktrees.checkpoints({ ...parent.worktree, path: located.value });
    if (!listed.ok || listed.value.length === 0) return null;
    return checkpointAt(await deps.runs.threadRuns(parent.id), thread.fork_cutoff, listed.value);
  }

  const directory: RunDirectory = async (thread) => {
    const project = thread.project === null ? null : await deps.catalog.project(thread.project);
    const repo = project?.repo ?? null;
    if (repo === null) {
      // A thread that has a worktree keeps working there, even when its project stopped naming the repository.
      return ok(thread.worktree?.path ?? (await deps.projectDirectory(thread.project, project)));
    }
    const base = thread.worktree?.base ?? project!.base ?? 'main';
    // A fork (a teleport's landing thread) starts from the branch of its nearest ancestor that has one: the work so far comes with it.
    let from: string | null = null;
    let ancestor = thread.worktree === null ? thread.fork_of : null;
    for (let depth = 0; ancestor !== null && from === null && depth < MAX_FORK_DEPTH; depth += 1) {
      const row = await deps.rows.findRow(thread.owner, ancestor);
      from = row?.worktree?.branch ?? null;
      ancestor = row?.fork_of ?? null;
    }
    // A new fork's worktree starts from its parent's checkpoint at the cutoff (its files then), else from the branch.
    const fromCheckpoint = thread.worktree === null ? await checkpointOfCutoff(thread) : null;
    const made = await deps.worktrees.ensure({ repo, base, threadId: thread.id, from, fromCheckpoint });
    if (!made.ok) return made;
    const recorded = thread.worktree ?? (await deps.threads.setWorktree(thread.id, made.value)) ?? made.value;
    // Where this instance keeps it: the path recorded is the first instance's, and another's disk is not this one's.
    const here = { ...recorded, path: made.value.path };
    const settled = deps.settle === undefined || thread.worktree === null ? ok(null) : await deps.settle({ id: thread.id, worktree: here });
    return settled.ok ? ok(here.path) : settled;
  };
  return directory;
}

/** `git worktree prune` in every repository project's repository (at start); never throws, a failure is logged. */
export async function pruneWorktrees(catalog: Pick<Catalog, 'projects' | 'project'>, worktrees: Pick<Worktrees, 'prune'>, log: Logger): Promise<void> {
  try {
    for (const name of await catalog.projects()) {
      const repo = (await catalog.project(name))?.repo ?? null;
      if (repo === null) continue;
      const pruned = await worktrees.prune(repo);
      if (!pruned.ok) log.warn({ project: name, code: pruned.error.code, detail: pruned.error.detail }, 'the worktrees of a repository project could not be pruned');
    }
  } catch (error) {
    log.warn({ err: error }, 'pruning worktrees failed');
  }
}
