import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type { Logger } from 'pino';

/** How much log output (in characters, about bytes) may wait for a slow reader; past it, lines are dropped. */
export const LOG_BUFFER_CHARS = 1024 * 1024;

/** How often, at most, a line says that lines were dropped. */
export const LOG_DROP_NOTICE_MS = 10_000;

/**
 * Where the service's log lines go: a stream (stdout) that never waits on its reader. A line is
 * queued on the stream, or dropped, whole, when the queue already holds `maxChars`; dropped lines are
 * counted. This is pino's destination in place of sonic-boom: its synchronous mode spins in
 * `Atomics.wait` while a pipe is full, and its asynchronous mode blocks a libuv thread on a blocking
 * pipe (then `process.exit` never returns, joining it) and flushes synchronously, retrying without end,
 * at exit. `process.stdout` on a pipe is non-blocking and queued by libuv: a line is written at once
 * when the pipe has room, and what is still queued when the process exits is lost, never waited on.
 * (A terminal is written synchronously by node, a file never stalls.)
 */
export interface BoundedLogStream {
  /** One line from pino. */
  readonly write: (line: string) => void;
  /** Lines dropped so far: the reader did not keep up, or the stream failed (its reader went away). */
  readonly dropped: () => number;
  /** Resolves once what is queued has been taken, or after `ms`, whichever comes first. */
  readonly drain: (ms: number) => Promise<void>;
}

/** A {@link BoundedLogStream} over `out` (process.stdout). */
export function boundedLogStream(out: Writable, maxChars = LOG_BUFFER_CHARS): BoundedLogStream {
  let dropped = 0;
  let broken = false;
  // A reader that went away (EPIPE) must not crash the service: its lines are dropped from then on.
  out.on('error', () => {
    broken = true;
  });
  return {
    write: (line) => {
      if (broken || out.writableLength + line.length > maxChars) {
        dropped++;
        return;
      }
      out.write(line);
    },
    dropped: () => dropped,
    drain: async (ms) => {
      if (broken || out.writableLength === 0) return;
      // A timer that holds the process (AbortSignal.timeout's does not): a wait with nothing else left
      // would end the event loop before its own deadline. Bounded by `ms` all the same.
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), ms);
      await Promise.race([once(out, 'drain', { signal: stop.signal }), once(out, 'close', { signal: stop.signal })]).catch(() => {});
      clearTimeout(timer);
      stop.abort();
    },
  };
}

/**
 * What to call once per {@link LOG_DROP_NOTICE_MS}: a `warn` line saying how many lines were dropped
 * since the last notice, when any were. The line itself is dropped too if the reader still stalls.
 */
export function dropNotices(stream: Pick<BoundedLogStream, 'dropped'>, log: Logger): () => void {
  let noticed = 0;
  return () => {
    const total = stream.dropped();
    if (total === noticed) return;
    log.warn({ dropped: total - noticed, droppedTotal: total }, "log lines were dropped: the log's reader did not keep up");
    // Read again: a notice dropped itself (the reader still stalls) does not call for another one.
    noticed = stream.dropped();
  };
}

/**
 * The log as a person reads it: on a terminal (`isTTY`), each of pino's JSON lines is formatted by
 * pino-pretty (a time, a coloured level, the message, then the fields) before it reaches `stream`;
 * anywhere else (a pipe, a file, a log shipper) the JSON lines go out as they are, and pino-pretty is
 * never loaded. In-process and synchronous: no transport thread, and `dropped`/`drain` are the stream's.
 */
export async function forReader(stream: BoundedLogStream, isTTY: boolean): Promise<BoundedLogStream> {
  if (!isTTY) return stream;
  // A CommonJS package: under tsx its functions are named exports, in the bundle (scripts/bundle.mjs) they sit on `default`.
  const loaded = await import('pino-pretty');
  const prettyFactory = loaded.prettyFactory ?? (loaded.default as unknown as typeof loaded).prettyFactory;
  const pretty = prettyFactory({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' });
  return { ...stream, write: (line) => stream.write(pretty(line)) };
}
