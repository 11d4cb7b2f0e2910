import { ok } from '../../domain/result.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import type { ProjectDirectory, RunDirectory } from '../../ports/run-directory.ts';
import type { Worktrees } from '../../ports/worktrees.ts';

/**
 * A thread's run directory (contract section 8): on a repository project, the thread's own worktree,
 * made (or repaired) before each turn and recorded on the thread the first time, from the base the
 * thread recorded then; on any other project, the project's directory.
 */
export function threadDirectories(deps: {
  readonly catalog: Pick<Catalog, 'project'>;
  readonly threads: Pick<ConsoleThreads, 'setWorktree'>;
  readonly worktrees: Worktrees;
  readonly projectDirectory: ProjectDirectory;
}): RunDirectory {
  return async (thread) => {
    const project = thread.project === null ? null : await deps.catalog.project(thread.project);
    const repo = project?.repo ?? null;
    if (repo === null) {
      // A thread that has a worktree keeps working there, even when its project stopped naming the repository.
      return ok(thread.worktree?.path ?? (await deps.projectDirectory(thread.project)));
    }
    const base = thread.worktree?.base ?? project!.base ?? 'main';
    const made = await deps.worktrees.ensure({ repo, base, threadId: thread.id });
    if (!made.ok) return made;
    const recorded = thread.worktree ?? (await deps.threads.setWorktree(thread.id, made.value)) ?? made.value;
    return ok(recorded.path);
  };
}
