import type { Logger } from 'pino';
import type { AgentProcess } from './agent-process.ts';

/** Options of {@link processLifetimes}. */
export interface ProcessLifetimeOptions {
  readonly log: Logger;
  /** How long a process nothing uses lives on before it is ended. */
  readonly idleMs: number;
  /** Processes (alive or starting) at which the least recently used idle one is ended before another starts. */
  readonly bound: number;
  /** Told of a process ended here on purpose (idle, or for room): its next start is no restart. */
  readonly ended: (key: string) => void;
}

/** How long sandboxed agent processes live, each under its key (an agent and a working directory). */
export interface ProcessLifetimes {
  /** Runs `work` with the process of `key` counted in use (from before its start): it is never ended meanwhile. */
  inUse<T>(key: string, work: () => Promise<T>): Promise<T>;
  /** The process of `key` is up: its idle time starts, unless something uses it. */
  up(key: string, proc: AgentProcess): void;
  /** The process of `key` has exited. */
  gone(key: string): void;
  /** Before a start, with `count` processes alive or starting: at the bound, ends the least recently used one nothing uses. */
  makeRoom(count: number): void;
  /** Stops every idle timer (the runner closes, ending its processes itself). */
  close(): void;
}

/**
 * A sandboxed agent has a process per working directory (a thread's worktree), so processes would
 * pile up with threads: one nothing has used for `idleMs` is ended, and at `bound` the least recently
 * used idle one makes room. When every one is in use, one more starts anyway, with a warning: a
 * turn is never refused for it. An ended process's sessions are loaded again, or briefed, by the next turn.
 */
export function processLifetimes(options: ProcessLifetimeOptions): ProcessLifetimes {
  const { log } = options;
  const live = new Map<string, AgentProcess>();
  const users = new Map<string, number>();
  const timers = new Map<string, NodeJS.Timeout>();
  /** The order of last use: a counter, not a clock, since only the order matters. */
  const lastUse = new Map<string, number>();
  let uses = 0;

  const end = (key: string, proc: AgentProcess, why: string) => {
    // Out of the reckoning at once: a second start meanwhile makes room with another.
    live.delete(key);
    log.info({ key: key.replace('\n', ' ') }, why);
    options.ended(key);
    void proc.stop();
  };

  function idleFrom(key: string): void {
    clearTimeout(timers.get(key));
    const timer = setTimeout(() => {
      const proc = live.get(key);
      if (proc !== undefined && !users.has(key)) end(key, proc, 'ending an idle sandboxed agent process');
    }, options.idleMs);
    timer.unref();
    timers.set(key, timer);
  }

  return {
    async inUse(key, work) {
      users.set(key, (users.get(key) ?? 0) + 1);
      clearTimeout(timers.get(key));
      lastUse.set(key, ++uses);
      try {
        return await work();
      } finally {
        const left = users.get(key)! - 1;
        if (left > 0) users.set(key, left);
        else users.delete(key);
        lastUse.set(key, ++uses);
        if (left === 0 && live.has(key)) idleFrom(key);
      }
    },
    up(key, proc) {
      live.set(key, proc);
      if (!lastUse.has(key)) lastUse.set(key, ++uses);
      if (!users.has(key)) idleFrom(key);
    },
    gone(key) {
      live.delete(key);
      lastUse.delete(key);
      clearTimeout(timers.get(key));
      timers.delete(key);
    },
    makeRoom(count) {
      if (count < options.bound) return;
      const quiet = [...live].filter(([key, proc]) => proc.alive() && !users.has(key));
      quiet.sort(([a], [b]) => (lastUse.get(a) ?? 0) - (lastUse.get(b) ?? 0));
      const oldest = quiet[0];
      if (oldest === undefined) return void log.warn({ processes: count }, 'every sandboxed agent process is in use: starting one more past the bound');
      end(oldest[0], oldest[1], 'ending the least recently used sandboxed agent process to make room');
    },
    close() {
      for (const timer of timers.values()) clearTimeout(timer);
      timers.clear();
    },
  };
}
