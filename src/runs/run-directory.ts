import { join, resolve } from 'node:path';
import type { ProjectDirectory } from '../../ports/run-directory.ts';

/** A project's default working directory, under `DATA_DIR`: one path segment, never `..`. */
export function projectDirectory(dataDir: string, project: string | null): string {
  const segment = project === null ? '_no_project' : project.replace(/[^A-Za-z0-9._-]/g, '_').replace(/^\.+$/, '_');
  return resolve(join(dataDir, 'projects', segment));
}

/**
 * Where a plain project's runs work on this host: the directory on disk the world names for the
 * project, else its default under `DATA_DIR`. The caller has read the project's entry: it is not read again.
 */
export const projectDirectories = (dataDir: string): ProjectDirectory => async (name, project) =>
  project?.directory ?? projectDirectory(dataDir, name);
