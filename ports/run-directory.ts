import type { Failure } from '../domain/errors.ts';
import type { Thread } from '../domain/model.ts';
import type { Result } from '../domain/result.ts';

/**
 * Where runs of a plain project work (their session's `cwd`, recorded as the run's `directory`), for
 * the project (null: none). The host answers it: a directory on disk, or whatever its agents take.
 */
export type ProjectDirectory = (project: string | null) => Promise<string>;

/**
 * Where a thread's runs work: its worktree for a repository project (made on its first turn; a fork's
 * from its parent's branch when the parent has one), else
 * its project's directory; a failure when the worktree cannot be made (`git_unavailable`, `repository_unavailable`).
 */
export type RunDirectory = (thread: Pick<Thread, 'id' | 'owner' | 'project' | 'worktree' | 'fork_of'>) => Promise<Result<string, Failure>>;
