import type { Readable } from 'node:stream';

/** How much of an agent's output may wait here, unread by the SDK, before its pipe is no longer read. */
const QUEUED_BYTES = 1 << 20;
/** A hold ends after this long whatever it waits for: a slow store holds the agent's output back no longer. */
export const MAX_HOLD_MS = 100;

/** A time limit that can be let go of: `done` resolves once it has passed, unless `cancel` came first. */
export interface Limit {
  readonly done: Promise<void>;
  cancel(): void;
}

/** A real timer that keeps no process alive. */
const timerLimit = (ms: number): Limit => {
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  return { done, cancel: () => clearTimeout(timer) };
};

/** An agent's output as the ACP SDK reads it, with a way to hold what comes next. */
export interface AgentInput {
  readonly readable: ReadableStream<Uint8Array>;
  /**
   * From now until the returned function is called, the output is handed on a line at a time, a macrotask
   * apart, so that a `hold` can come between any two lines. Otherwise all that has arrived goes in one read.
   */
  arm(): () => void;
  /**
   * Nothing more is handed on until `until` settles, or `MAX_HOLD_MS` have passed: the lines read so far, and
   * what the SDK does with them, go first. Holds may overlap; reading goes on once none is left. Once the
   * output has ended, holds no longer count: what is left goes on at once.
   */
  hold(until: Promise<unknown>): void;
  /** Settles once everything received has been handed on and the stream has ended (or was cancelled). */
  readonly drained: Promise<void>;
}

const NEWLINE = 0x0a;

/**
 * The agent's stdout for the SDK. The SDK parses every line of a chunk it reads at once and starts their
 * handlers together. While the process runs a single turn (`arm`, agent-turn.ts), the lines go on one at a
 * time instead, and the turn holds the rest while its first update is stored and published (turn-route.ts):
 * the agent's next lines are not parsed meanwhile, so that store, which the person waits on, does not share
 * the cores with them (docs/benchmarks.md, turn). Nothing is dropped or reordered; an
 * incomplete line is handed on as it is (the SDK joins it and bounds its length); the pipe stops being read
 * while more than a MiB waits here; and once the output ends, all that is left goes on at once, holds or not,
 * so an agent's last answer before it exits is read before its exit is.
 */
export function agentInput(stdout: Readable, limit: (ms: number) => Limit = timerLimit): AgentInput {
  const pieces: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failed: Error | null = null;
  let wake: (() => void) | null = null;
  const holds = new Set<Promise<unknown>>();
  let released: (() => void) | null = null;
  let armed = 0;
  let drain!: () => void;
  const drained = new Promise<void>((resolve) => (drain = resolve));

  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
  };
  const release = () => {
    const resume = released;
    released = null;
    resume?.();
  };
  const finish = () => {
    ended = true;
    notify();
    release();
  };
  stdout.on('data', (chunk: Buffer) => {
    let from = 0;
    for (let at = chunk.indexOf(NEWLINE); at !== -1; at = chunk.indexOf(NEWLINE, from)) {
      pieces.push(chunk.subarray(from, at + 1));
      from = at + 1;
    }
    if (from < chunk.length) pieces.push(chunk.subarray(from));
    queued += chunk.length;
    if (queued > QUEUED_BYTES) stdout.pause();
    notify();
  });
  stdout.on('end', finish);
  // Destroyed without an end (its process killed): nothing more will come.
  stdout.on('close', finish);
  stdout.on('error', (error: Error) => {
    failed = error;
    finish();
  });

  const over = () => ended || failed !== null;
  const heldBack = (): Promise<void> | null => (holds.size === 0 || over() ? null : new Promise<void>((resolve) => (released = resolve)));
  const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
  let handed = false;

  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // What the last line started (the SDK's parse, its handlers, a hold) runs before the next is handed on.
        if (handed && (armed > 0 || holds.size > 0) && !over()) await macrotask();
        for (let waiting = heldBack(); waiting !== null; waiting = heldBack()) await waiting;
        while (pieces.length === 0 && !over()) await new Promise<void>((resolve) => (wake = resolve));
        if (pieces.length === 0) {
          if (failed !== null) controller.error(failed);
          else controller.close();
          drain();
          return;
        }
        // One line while a hold may come; else (and once the output has ended) all that has arrived.
        const piece = armed > 0 && !over() ? pieces.shift()! : pieces.length === 1 ? pieces.pop()! : Buffer.concat(pieces.splice(0));
        queued -= piece.length;
        if (queued <= QUEUED_BYTES && stdout.isPaused() && !over()) stdout.resume();
        handed = true;
        controller.enqueue(piece);
      },
      cancel() {
        // As Readable.toWeb does: the SDK gave up reading (its connection closed), so the pipe is let go.
        stdout.destroy();
        finish();
        drain();
      },
    },
    { highWaterMark: 0 },
  );

  return {
    readable,
    drained,
    arm() {
      armed++;
      let disarmed = false;
      return () => {
        if (disarmed) return;
        disarmed = true;
        armed--;
      };
    },
    hold(until) {
      const bound = limit(MAX_HOLD_MS);
      const bounded = Promise.race([until, bound.done]).then(() => {}, () => {}).finally(bound.cancel);
      holds.add(bounded);
      void bounded.then(() => {
        holds.delete(bounded);
        if (holds.size === 0) release();
      });
    },
  };
}
