import { randomUUID } from 'node:crypto';
import { lstat, mkdir, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';

/** A lock older than this is taken for a crashed holder's and broken, whoever held it. */
const STALE_MS = 5 * 60_000;
/** How long a caller waits for another's lock before giving up. */
const WAIT_MS = 2 * 60_000;

/** This process among all that share the directory: host, process id, and a token of this run of it. */
const SELF = { host: hostname(), pid: process.pid, token: randomUUID() };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether the holder a lock names is known to be gone: a process of this host that no longer runs, or an earlier run of this one's id. */
function gone(holder: string): boolean {
  const [host, pid, token] = holder.split(' ');
  if (host !== SELF.host || pid === undefined || token === undefined || !/^\d+$/.test(pid)) return false;
  if (Number(pid) === SELF.pid) return token !== SELF.token;
  try {
    process.kill(Number(pid), 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * One lock per key (a thread id): callers in this process queue on a promise; between processes
 * sharing the directory, the lock is a symbolic link made atomically, whose target names its holder
 * (host, process id, a token of the process's run), removed when done. A lock whose holder is known
 * to be gone (killed on this host: its process no longer runs) is broken at once; any other, when
 * older than a holder could live. A lock is broken by moving it aside first, so two breakers never
 * remove each other's new lock.
 */
export function threadLocks(directory: string) {
  const tails = new Map<string, Promise<unknown>>();

  /** Breaks the lock at `path` if it is still the one `seen` (a holder, or null for one that names none). */
  async function breakLock(path: string, seen: string | null): Promise<void> {
    const aside = `${path}.broken-${randomUUID()}`;
    if (!(await rename(path, aside).then(() => true, () => false))) return;
    const found = await readlink(aside).catch(() => null);
    if (found !== seen && found !== null) {
      // Another's new lock was taken: it goes back unless a third took the place meanwhile.
      await symlink(found, path).catch(() => {});
    }
    await rm(aside, { recursive: true, force: true });
  }

  async function acquire(key: string): Promise<string> {
    await mkdir(directory, { recursive: true });
    const path = join(directory, key);
    const mine = `${SELF.host} ${SELF.pid} ${SELF.token}`;
    const until = Date.now() + WAIT_MS;
    for (;;) {
      try {
        await symlink(mine, path);
        return path;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const held = await lstat(path).then((s) => ({ age: Date.now() - s.mtimeMs, link: s.isSymbolicLink() }), () => null);
      if (held === null) continue;
      const holder = held.link ? await readlink(path).catch(() => null) : null;
      if ((holder !== null && gone(holder)) || held.age > STALE_MS) await breakLock(path, holder);
      else if (Date.now() > until) throw new Error(`the worktree lock ${key} is held elsewhere`);
      else await sleep(50);
    }
  }

  return {
    /** Runs `body` holding the key's lock. */
    async with<T>(key: string, body: () => Promise<T>): Promise<T> {
      const before = tails.get(key) ?? Promise.resolve();
      const run = before.catch(() => {}).then(async () => {
        const path = await acquire(key);
        try {
          return await body();
        } finally {
          await unlink(path).catch(() => {});
        }
      });
      tails.set(key, run);
      try {
        return await run;
      } finally {
        if (tails.get(key) === run) tails.delete(key);
      }
    },
  };
}
