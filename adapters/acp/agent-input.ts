import type { Readable } from 'node:stream';

/** How much of an agent's output may wait here, unread by the SDK, before its pipe is no longer read. */
const QUEUED_BYTES = 1 << 20;
/** A hold ends after this long whatever it waits for: a slow store never stops the agent's other sessions for longer. */
export const MAX_HOLD_MS = 1_000;

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
  /** The output, one line (or the part of one that has arrived) per read, a macrotask apart. */
  readonly readable: ReadableStream<Uint8Array>;
  /**
   * Nothing more is handed on until `until` settles, or `MAX_HOLD_MS` have passed: the lines read so far, and
   * what the SDK does with them, go first. Holds may overlap; reading goes on once none is left.
   */
  hold(until: Promise<unknown>): void;
}

const NEWLINE = 0x0a;

/**
 * The agent's stdout for the SDK, a line at a time. The SDK parses every line of a chunk it reads at once and
 * starts their handlers together; here each line is handed on alone, after a macrotask (so whatever the last
 * one started has run, a hold included). A turn holds the rest while its first update is stored and
 * published (turn-route.ts): the agent's next lines are not parsed meanwhile, so that store, which the person
 * waits on, does not share the two cores with them (docs/benchmarks.md, turn). Nothing is dropped or reordered;
 * an incomplete line is handed on as it is (the SDK joins it and bounds its length), and the pipe stops being read
 * while more than a MiB waits here.
 */
export function agentInput(stdout: Readable, limit: (ms: number) => Limit = timerLimit): AgentInput {
  const pieces: Buffer[] = [];
  let queued = 0;
  let ended = false;
  let failed: Error | null = null;
  let wake: (() => void) | null = null;
  const holds = new Set<Promise<unknown>>();
  let released: (() => void) | null = null;

  const notify = () => {
    const resume = wake;
    wake = null;
    resume?.();
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
  stdout.on('end', () => {
    ended = true;
    notify();
  });
  stdout.on('error', (error: Error) => {
    failed = error;
    notify();
  });

  const heldBack = (): Promise<void> | null => {
    if (holds.size === 0) return null;
    return new Promise<void>((resolve) => (released = resolve));
  };
  const macrotask = () => new Promise<void>((resolve) => setImmediate(resolve));
  let first = true;

  const readable = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        // What the last piece started (the SDK's parse, its handlers, a hold) runs before the next is handed on.
        if (!first) await macrotask();
        first = false;
        for (let waiting = heldBack(); waiting !== null; waiting = heldBack()) await waiting;
        while (pieces.length === 0 && !ended && failed === null) await new Promise<void>((resolve) => (wake = resolve));
        const piece = pieces.shift();
        if (piece === undefined) {
          if (failed !== null) controller.error(failed);
          else controller.close();
          return;
        }
        queued -= piece.length;
        if (queued <= QUEUED_BYTES && stdout.isPaused()) stdout.resume();
        controller.enqueue(piece);
      },
      cancel() {
        // As Readable.toWeb does: the SDK gave up reading (its connection closed), so the pipe is let go.
        stdout.destroy();
        ended = true;
        notify();
      },
    },
    { highWaterMark: 0 },
  );

  return {
    readable,
    hold(until) {
      const bound = limit(MAX_HOLD_MS);
      const bounded = Promise.race([until, bound.done]).then(() => {}, () => {}).finally(bound.cancel);
      holds.add(bounded);
      void bounded.then(() => {
        holds.delete(bounded);
        if (holds.size === 0) {
          const release = released;
          released = null;
          release?.();
        }
      });
    },
  };
}
