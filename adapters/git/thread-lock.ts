import { mkdir, rmdir, stat } from 'node:fs/promises';
import { join } from 'node:path';

/** A lock older than this is taken for a crashed holder's and broken. */
const STALE_MS = 5 * 60_000;
/** How long a caller waits for another's lock before giving up. */
const WAIT_MS = 2 * 60_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * One lock per key (a thread id): callers in this process queue on a promise; between processes
 * sharing the directory, the lock is a directory made with `mkdir` (atomic), removed when done, and
 * broken when older than a holder could live (a crash left it).
 */
export function threadLocks(directory: string) {
  const tails = new Map<string, Promise<unknown>>();

  async function acquire(key: string): Promise<string> {
    await mkdir(directory, { recursive: true });
    const path = join(directory, key);
    const until = Date.now() + WAIT_MS;
    for (;;) {
      try {
        await mkdir(path);
        return path;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const age = await stat(path).then((s) => Date.now() - s.mtimeMs, () => 0);
      if (age > STALE_MS) await rmdir(path).catch(() => {});
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
          await rmdir(path).catch(() => {});
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
