import type { Logger } from 'pino';
import type { LiveWebSocket } from './live-websocket.ts';

/** Options of {@link keyWaits}. */
export interface KeyWaitsOptions {
  /** The row of the user's console key, or null while it is not written. */
  readonly findByKey: (userId: string, key: string) => Promise<{ readonly id: string } | null>;
  readonly log: Logger;
  /** How often a socket waiting on a key looks for the key's row, in case its signal was lost. */
  readonly recheckMs: number;
  /** A waiting socket's key has its row: its thread's events start, from `after` (the client's cursor, else 0). */
  readonly found: (ws: LiveWebSocket, threadId: string, after: number) => void;
}

/** Sockets waiting on a console key whose row is not written yet. */
export interface KeyWaits {
  /** Has the socket wait on the key (looked up at once: only that lookup's failure closes it). */
  readonly wait: (ws: LiveWebSocket, key: string, after: number | null) => void;
  /** The socket waits no more (it closed). */
  readonly stop: (ws: LiveWebSocket) => void;
  /** A key's row was written (`thread_created`): its waiting sockets start. */
  readonly created: (owner: string, key: string, threadId: string) => void;
  /** Every waiting socket looks for its row again (the bus reconnected: a signal may be lost). */
  readonly lookUpAll: () => void;
  /** Stops every wait. */
  readonly close: () => void;
}

/**
 * Sockets waiting on a key: one timer looks their keys up again while any waits. The row may have
 * been written between the upgrade's lookup and the wait, or its thread_created signal lost (the bus
 * reconnected, or another instance's notification was cut): storage is asked again then, and every
 * few seconds while the socket waits. Only the first lookup's failure closes the socket; a later one
 * waits for the next.
 */
export function keyWaits(options: KeyWaitsOptions): KeyWaits {
  const { log } = options;
  const waiters = new Set<LiveWebSocket>();
  let recheck: NodeJS.Timeout | null = null;
  const stop = (ws: LiveWebSocket): void => {
    ws.waiting = null;
    waiters.delete(ws);
    if (waiters.size === 0 && recheck !== null) {
      clearInterval(recheck);
      recheck = null;
    }
  };
  /** A waiting socket's key has its row: from its first event unless the client gave a cursor. */
  const begin = (ws: LiveWebSocket, threadId: string): void => {
    if (ws.waiting === null) return;
    const { after } = ws.waiting;
    stop(ws);
    options.found(ws, threadId, after ?? 0);
  };
  const lookUp = (ws: LiveWebSocket, fatal = false): void => {
    const key = ws.waiting?.key;
    if (key === undefined) return;
    options
      .findByKey(ws.userId, key)
      .then((row) => {
        if (row !== null) begin(ws, row.id);
      })
      .catch((error: unknown) => {
        if (ws.waiting === null) return;
        log.warn({ err: error }, 'live socket key lookup failed');
        if (fatal) ws.close(1011, 'lookup failed');
      });
  };
  return {
    wait: (ws, key, after) => {
      ws.waiting = { key, after };
      waiters.add(ws);
      if (recheck === null) {
        recheck = setInterval(() => {
          for (const each of waiters) lookUp(each);
        }, options.recheckMs);
        recheck.unref();
      }
      lookUp(ws, true);
    },
    stop,
    created: (owner, key, threadId) => {
      for (const ws of waiters) if (ws.userId === owner && ws.waiting?.key === key) begin(ws, threadId);
    },
    lookUpAll: () => {
      for (const ws of waiters) lookUp(ws);
    },
    close: () => {
      for (const waiting of [...waiters]) stop(waiting);
    },
  };
}
