import type { Logger } from 'pino';

/** How long a shutdown may take before the process exits anyway, whatever is still in flight. */
export const HARD_EXIT_MS = 10_000;

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
}

/**
 * On the first SIGTERM or SIGINT: `stop()`, then exit 0 (1 if it failed). A timer exits 1 after
 * `hardExitMs` whatever is still pending (a stuck agent, a hung database); it is unref'd, so it
 * never holds a process that has nothing else left. Later signals are ignored rather than cutting
 * the drain short: Ctrl-C under `npm start` delivers SIGINT twice (the terminal's and npm's).
 */
export function exitOnSignals(options: ExitOnSignalsOptions): void {
  const { stop, log } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  const on = options.on ?? ((signal, listener) => process.on(signal, listener));
  const hardExitMs = options.hardExitMs ?? HARD_EXIT_MS;
  let stopping = false;
  const onSignal = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    const hard = setTimeout(() => {
      log.error({ ms: hardExitMs }, 'shutdown did not finish in time: exiting anyway');
      exit(1);
    }, hardExitMs);
    hard.unref();
    stop().then(
      () => {
        clearTimeout(hard);
        exit(0);
      },
      (error: unknown) => {
        clearTimeout(hard);
        log.error({ err: error }, 'shutdown failed');
        exit(1);
      },
    );
  };
  for (const signal of STOP_SIGNALS) on(signal, () => onSignal(signal));
}
