import { createHash } from 'node:crypto';
import { closeSync, openSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { bindDirSocket, type DirSocket, listenOn, LOCK_SOCKET } from './dir-socket-lock.ts';

export { LOCK_SOCKET };

/** The lock file's name inside the data dir; it holds the owner's process id. */
export const LOCK_FILE = 'console.lock';

/** A held lock on a data dir. */
export interface DataDirLock {
  /** Frees the lock and removes the lock file (only if this process still owns it). */
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

const ownerOf = (path: string): number | null => {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
};

/**
 * Takes the data dir `dir` or throws an error naming the directory and the process holding it.
 * On Linux the lock is two listening sockets. One is in the abstract namespace, named after the
 * directory's real path: the bind is atomic, and the kernel frees the name the moment the holder's
 * descriptors close, which happens as it dies, before its parent reaps it (a pid check sees a zombie
 * as alive, and refused a restart right after `kill -9` until then). Abstract names are per network
 * namespace, so the other is `<dir>/console.sock` ({@link bindDirSocket}), which keeps containers that
 * share the directory apart. libuv opens both close-on-exec, so an agent process the holder started
 * never inherits them. `<dir>/console.lock` still names the holder's pid, for the message and for a
 * person looking. Elsewhere the lock file alone is the lock ({@link lockWithFile}).
 */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const path = join(dir, LOCK_FILE);
  const refuse = (pid: number | null, elsewhere = false) => {
    // A holder in another network namespace may also have a pid namespace of its own (a container's pid 1).
    const who = elsewhere
      ? `${pid === null ? 'a process' : `process ${pid}`} in another network namespace (a container sharing the directory?)`
      : pid === process.pid || pid === null ? 'this process' : `process ${pid}`;
    return new DataDirLockedError(`The data directory ${dir} is in use by ${who} (lock file ${path}); stop it or choose another DATA_DIR`);
  };
  if (held.has(dir)) throw refuse(process.pid);
  held.add(dir); // at once: a second call in this process, while the bind is under way, is refused too
  try {
    const free = process.platform === 'linux' ? await lockWithSocket(dir, path, refuse) : lockWithFile(path, refuse);
    return {
      release: () => {
        if (!held.delete(dir)) return;
        free();
        if (ownerOf(path) === process.pid) rmSync(path, { force: true });
      },
    };
  } catch (error) {
    held.delete(dir);
    throw error;
  }
}

type Refuse = (pid: number | null, elsewhere?: boolean) => DataDirLockedError;

/** The abstract socket's name: the real path's digest (a symlink or `..` names the same directory). */
const socketName = (dir: string): string => `\0agent-console-data-dir-${createHash('sha256').update(realpathSync(dir)).digest('hex').slice(0, 40)}`;

/**
 * How long a bind that finds the name taken is tried again while its holder is dying. A process killed
 * with SIGKILL closes its descriptors only once its last thread has exited, which on a busy machine
 * comes a while after its main thread (shown as a zombie from then on): a restart in that instant
 * waits for it rather than being refused. A holder that runs is refused at once.
 */
const BIND_RETRY_MS = 2_000;
const BIND_RETRY_EVERY_MS = 20;

/** Whether the lock file's pid is gone or a zombie (or unknown), read from /proc. */
function dying(pid: number | null): boolean {
  if (pid === null) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ...: comm may hold spaces and parentheses, so read after the last ')'.
    return ['Z', 'X', 'x'].includes(stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3));
  } catch {
    return true;
  }
}

/**
 * Binds the directory's abstract socket, then its socket in the directory (either taken: it is held),
 * then writes this pid to the lock file.
 */
async function lockWithSocket(dir: string, path: string, refuse: Refuse): Promise<() => void> {
  const name = socketName(dir);
  const deadline = Date.now() + BIND_RETRY_MS;
  let server: Server = createServer((socket) => socket.destroy());
  while (!(await listenOn(server, name))) {
    const holder = ownerOf(path);
    if (Date.now() >= deadline || !dying(holder)) throw refuse(holder);
    await new Promise((resolve) => setTimeout(resolve, BIND_RETRY_EVERY_MS));
    // A server whose listen failed is not listened on again: a fresh one for each attempt.
    server = createServer((socket) => socket.destroy());
  }
  // It must never keep a process alive that has nothing else left.
  server.unref();
  let file: DirSocket;
  try {
    // Taken while the abstract name was free: its holder is in another network namespace. A dying one
    // is waited for as above (a pid from another pid namespace is not seen here: waited for, then refused).
    while ((file = await bindDirSocket(dir)).held) {
      const holder = ownerOf(path);
      if (Date.now() >= deadline || !dying(holder)) throw refuse(holder, true);
      await new Promise((resolve) => setTimeout(resolve, BIND_RETRY_EVERY_MS));
    }
  } catch (error) {
    server.close();
    throw error;
  }
  const release = file.release;
  try {
    writeFileSync(path, `${process.pid}\n`); // replaces what a holder that died left
  } catch (error) {
    release();
    server.close();
    throw error;
  }
  return () => {
    release();
    server.close();
  };
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

/** Whether a process id names a running process (EPERM: it runs, under another user). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
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

/**
 * The portable lock: `<dir>/console.lock` created exclusively, holding the owner's pid. A lock left by
 * a process that is gone is taken over. (Two processes taking over the same stale lock at the same
 * instant is not excluded; a holder killed but not yet reaped, or a lock whose pid was reused, looks
 * alive: remove the file.)
 */
function lockWithFile(path: string, refuse: Refuse): () => void {
  if (!tryCreate(path)) {
    const pid = ownerOf(path);
    if (pid === null ? isFresh(path) : isAlive(pid)) throw refuse(pid);
    rmSync(path, { force: true }); // stale: its process is gone, or it never got a pid written
    if (!tryCreate(path)) throw refuse(ownerOf(path));
  }
  return () => {};
}
