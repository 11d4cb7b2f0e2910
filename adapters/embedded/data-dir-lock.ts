import { closeSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** The lock file's name inside the data dir; it holds the owner's process id. */
export const LOCK_FILE = 'console.lock';

/** A held lock on a data dir. */
export interface DataDirLock {
  /** Removes the lock file (only if this process still owns it). */
  readonly release: () => void;
}

/** Another process (or this one) holds the data dir; the message names it and the lock file. */
export class DataDirLockedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DataDirLockedError';
  }
}

/** Directories this process holds: a second start in the same process is refused like another process's. */
const held = new Set<string>();

/** Whether a process id names a running process (EPERM: it runs, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Creates the lock file only if absent (O_EXCL), so two processes cannot both succeed. */
function tryCreate(path: string): boolean {
  try {
    const fd = openSync(path, 'wx');
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** An empty lock file younger than this may be another process between creating it and writing its pid. */
const WRITE_GRACE_MS = 5_000;

const isFresh = (path: string): boolean => {
  try {
    return Date.now() - statSync(path).mtimeMs < WRITE_GRACE_MS;
  } catch {
    return false;
  }
};

const ownerOf = (path: string): number | null => {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
};

/**
 * Takes `<dir>/console.lock` or throws an error naming the directory and the process holding it.
 * A lock left by a process that is gone is taken over. (Two processes taking over the same stale
 * lock at the same instant is not excluded; a lock whose pid was reused looks alive: remove the file.)
 */
export function lockDataDir(dir: string): DataDirLock {
  const path = join(dir, LOCK_FILE);
  const refuse = (pid: number | null) =>
    new DataDirLockedError(`The data directory ${dir} is in use by ${pid === process.pid || pid === null ? 'this process' : `process ${pid}`} (lock file ${path}); stop it or choose another DATA_DIR`);
  if (held.has(dir)) throw refuse(process.pid);
  if (!tryCreate(path)) {
    const pid = ownerOf(path);
    if (pid === null ? isFresh(path) : isAlive(pid)) throw refuse(pid);
    rmSync(path, { force: true }); // stale: its process is gone, or it never got a pid written
    if (!tryCreate(path)) throw refuse(ownerOf(path));
  }
  held.add(dir);
  return {
    release: () => {
      if (!held.delete(dir)) return;
      if (ownerOf(path) === process.pid) rmSync(path, { force: true });
    },
  };
}
