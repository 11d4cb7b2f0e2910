import { ok } from '../../domain/result.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { Logger } from '../../ports/logger.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ProjectDirectory, RunDirectory } from '../../ports/run-directory.ts';
import type { Worktrees } from '../../ports/worktrees.ts';

/** How far up a fork chain a new worktree looks for a branch to start from. */
const MAX_FORK_DEPTH = 16;

/**
 * A thread's run directory (contract section 8): on a repository project, the thread's own worktree,
 * made (or repaired) before each turn and recorded on the thread the first time, from the base the
 * thread recorded then (a fork's from its parent's branch); on any other project, the project's directory.
 */
export function threadDirectories(deps: {
  readonly catalog: Pick<Catalog, 'project'>;
  readonly threads: Pick<ConsoleThreads, 'setWorktree'>;
  /** A fork's parent row, read as the fork's owner (who could read the source when it was made). */
  readonly rows: Pick<ThreadStore, 'findRow'>;
  readonly worktrees: Worktrees;
  readonly projectDirectory: ProjectDirectory;
}): RunDirectory {
  return async (thread) => {
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
    const made = await deps.worktrees.ensure({ repo, base, threadId: thread.id, from });
    if (!made.ok) return made;
    const recorded = thread.worktree ?? (await deps.threads.setWorktree(thread.id, made.value)) ?? made.value;
    return ok(recorded.path);
  };
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
