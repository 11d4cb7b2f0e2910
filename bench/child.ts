import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

/** How long a child has to answer a command. */
export const STEP_MS = 120_000;

export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms)));
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A child speaking one JSON line per answer; `ask` sends a command (or none) and reads the next answer. */
export function child(args: string[], what: string): { process: ChildProcess; ask: <T>(command: string | null, ms?: number) => Promise<T> } {
  // BENCH_PROFILE_DIR: each process writes a CPU profile there (named by its pid, shown in the log).
  const profile = process.env.BENCH_PROFILE_DIR === undefined ? [] : ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`];
  const process_ = spawn(process.execPath, [...profile, '--import', 'tsx', ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
  if (profile.length > 0) console.log(`${what}: pid ${process_.pid}`);
  const lines = createInterface({ input: process_.stdout! })[Symbol.asyncIterator]();
  return {
    process: process_,
    ask: async <T>(command: string | null, ms = STEP_MS): Promise<T> => {
      if (command !== null) process_.stdin!.write(`${command}\n`);
      for (;;) {
        const line = await within(lines.next(), ms, `${what} ${command ?? 'start'}`);
        if (line.done === true) throw new Error(`${what}: the process ended (${command ?? 'start'})`);
        const value = JSON.parse(String(line.value)) as T;
        // The service's own log lines (pino's, on the same stdout) are passed on to stderr; the next line is the answer.
        if (typeof value === 'object' && value !== null && 'msg' in value && 'level' in value) process.stderr.write(`${what}: ${String(line.value)}\n`);
        else return value;
      }
    },
  };
}
