import type { Failure } from '../domain/errors.ts';
import type { Project, Thread } from '../domain/model.ts';
import type { Result } from '../domain/result.ts';

/**
 * Where runs of a plain project work (their session's `cwd`, recorded as the run's `directory`), for
 * the project named `name` (null: none), whose catalog entry `project` the caller has read already (null: none, or
 * no longer in the catalog). The host answers it: a directory on disk, or whatever its agents take.
 */
export type ProjectDirectory = (name: string | null, project: Pick<Project, 'directory'> | null) => Promise<string>;

/**
 * Where a thread's runs work: its worktree for a repository project (made on its first turn; a fork's
 * from its parent's branch when the parent has one), else
 * its project's directory; a failure when the worktree cannot be made (`git_unavailable`, `repository_unavailable`).
 */
export type RunDirectory = (thread: Pick<Thread, 'id' | 'owner' | 'project' | 'worktree' | 'fork_of' | 'fork_cutoff'>) => Promise<Result<string, Failure>>;
