/**
 * Where a thread's runs work (their session's `cwd`, recorded as the run's `directory`), for the
 * thread's project (null: none). The host answers it: a directory on disk, or whatever its agents take.
 */
export type RunDirectory = (project: string | null) => Promise<string>;
