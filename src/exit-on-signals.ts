import type { Logger } from 'pino';

/** How long a shutdown may take before the process exits anyway, whatever is still in flight. */
export const HARD_EXIT_MS = 10_000;

/** How long, at most, the last log lines may wait for their reader before a stopped process exits. */
export const LOG_FLUSH_MS = 1_000;

/** The signals that stop the service: `kill`'s default, and Ctrl-C (npm forwards both to its script). */
export const STOP_SIGNALS = ['SIGTERM', 'SIGINT'] as const;

export interface ExitOnSignalsOptions {
  /** Drains and releases everything; resolves when the process may exit 0. */
  readonly stop: () => Promise<void>;
  readonly log: Logger;
  /** `process.exit`, or a fake in tests. */
  readonly exit?: (code: number) => void;
  /** `process.on`, or a fake in tests. */
  readonly on?: (signal: (typeof STOP_SIGNALS)[number], listener: () => void) => void;
  readonly hardExitMs?: number;
  /**
   * Lets the log's reader take what is queued, for at most the time given (the log stream's `drain`):
   * awaited before a clean exit, never longer than what is left of `hardExitMs`.
   */
  readonly flushLog?: (ms: number) => Promise<void>;
}

/**
 * On the first SIGTERM or SIGINT: `stop()`, then exit 0 (1 if it failed). A timer exits 1 after
 * `hardExitMs` whatever is still pending (a stuck agent, a hung database); it is unref'd, so it
 * never holds a process that has nothing else left. Later signals are ignored rather than cutting
 * the drain short: Ctrl-C under `npm start` delivers SIGINT twice (the terminal's and npm's). Before
 * exiting, the last log lines get up to {@link LOG_FLUSH_MS} to reach a reader that is still reading;
 * a reader that stalls costs them, never the deadline.
 */
export function exitOnSignals(options: ExitOnSignalsOptions): void {
  const { stop, log } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const on = options.on ?? ((signal, listener) => process.on(signal, listener));
  const hardExitMs = options.hardExitMs ?? HARD_EXIT_MS;
  const flushLog = options.flushLog ?? (async () => {});
  let stopping = false;
  const onSignal = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const started = Date.now();
    log.info({ signal }, 'shutting down');
    const hard = setTimeout(() => {
      log.error({ ms: hardExitMs }, 'shutdown did not finish in time: exiting anyway');
      exit(1);
    }, hardExitMs);
    hard.unref();
    // The hard timer stays armed while the log flushes: the deadline holds whatever the flush does.
    const exitAfterFlush = (code: number): void => {
      const left = hardExitMs - (Date.now() - started);
      void flushLog(Math.max(0, Math.min(LOG_FLUSH_MS, left))).finally(() => {
        clearTimeout(hard);
        exit(code);
      });
    };
    stop().then(
      () => exitAfterFlush(0),
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed');
        exitAfterFlush(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) on(signal, () => onSignal(signal));
}
