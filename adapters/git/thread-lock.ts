import { randomUUID } from 'node:crypto';
import { lstat, lutimes, mkdir, readlink, rename, rm, symlink, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Clock } from '../../ports/clock.ts';

/** How often a holder marks its lock alive (the link's modification time, set to its clock's now). */
export const HEARTBEAT_MS = 5_000;
/**
 * A lock whose holder has not marked it alive for this long is a crashed holder's, whoever (on whatever host)
 * held it, and is broken: three heartbeats missed, so a busy event loop or clocks a few seconds apart are no crash.
 */
export const STALE_MS = 15_000;
/** How long a caller waits for another's lock before giving up. */
const WAIT_MS = 2 * 60_000;

/** This process among all that share the directory: host, process id, and a token of this run of it. */
const SELF = { host: hostname(), pid: process.pid, token: randomUUID() };

/** The host's time, and a heartbeat that never keeps the process up by itself. */
const HOST_CLOCK: Pick<Clock, 'now' | 'every'> = {
  now: () => Date.now(),
  every(ms, work) {
    const timer = setInterval(work, ms);
    timer.unref();
    return () => clearInterval(timer);
  },
};

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
 * sharing the directory (on one host, or several mounting it), the lock is a symbolic link made
 * atomically, whose target names its holder (host, process id, a token of the process's run), removed
 * when done. Its holder sets the link's modification time to its clock's now every {@link HEARTBEAT_MS}
 * while it holds it. A lock whose holder is known to be gone (killed on this host: its process no longer
 * runs) is broken at once; any other once its heartbeat is {@link STALE_MS} old: another host's process
 * cannot be asked whether it runs, but a dead one stops marking its lock. A lock is broken by moving it
 * aside first, so two breakers never remove each other's new lock. `clock`: the time of the heartbeats
 * and of the wait (a test moves it).
 */
export function threadLocks(directory: string, clock: Pick<Clock, 'now' | 'every'> = HOST_CLOCK) {
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

  /** Marks the lock at `path` alive now (the link itself, never what it names); one broken meanwhile is left alone. */
  const beat = async (path: string) => {
    const now = new Date(clock.now());
    await lutimes(path, now, now).catch(() => {});
  };

  async function acquire(key: string): Promise<string> {
    await mkdir(directory, { recursive: true });
    const path = join(directory, key);
    const mine = `${SELF.host} ${SELF.pid} ${SELF.token}`;
    const until = clock.now() + WAIT_MS;
    for (;;) {
      try {
        await symlink(mine, path);
        await beat(path);
        return path;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const held = await lstat(path).then((s) => ({ age: clock.now() - s.mtimeMs, link: s.isSymbolicLink() }), () => null);
      if (held === null) continue;
      const holder = held.link ? await readlink(path).catch(() => null) : null;
      if ((holder !== null && gone(holder)) || held.age > STALE_MS) await breakLock(path, holder);
      else if (clock.now() > until) throw new Error(`the worktree lock ${key} is held elsewhere`);
      else await sleep(50);
    }
  }

  return {
    /** Runs `body` holding the key's lock. */
    async with<T>(key: string, body: () => Promise<T>): Promise<T> {
      const before = tails.get(key) ?? Promise.resolve();
      const run = before.catch(() => {}).then(async () => {
        const path = await acquire(key);
        const stop = clock.every(HEARTBEAT_MS, () => void beat(path));
        try {
          return await body();
        } finally {
          stop();
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
