import { WebSocket } from 'ws';
import type { WireEvent } from '../../domain/events.ts';

/** A live-socket client for tests: collects every event and waits for the ones a test expects. */
export interface LiveClient {
  readonly events: WireEvent[];
  /** Resolves with the collected events once `done` holds for them; rejects after `ms`. */
  until(done: (events: readonly WireEvent[]) => boolean, ms?: number): Promise<WireEvent[]>;
  /** Resolves with the close code. */
  readonly closed: Promise<number>;
  close(): void;
}

/** The HTTP status of a refused upgrade, or the open client. */
export function connectLive(
  port: number,
  query: Record<string, string>,
  headers: Record<string, string> = { authorization: 'Bearer token-alice' },
): Promise<LiveClient | { refused: number }> {
  const url = `ws://127.0.0.1:${port}/api/console/live?${new URLSearchParams(query)}`;
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const events: WireEvent[] = [];
    const waiters = new Set<() => void>();
    ws.on('message', (data) => {
      events.push(JSON.parse(String(data)));
      for (const wake of waiters) wake();
    });
    ws.on('unexpected-response', (_req, res) => {
      resolve({ refused: res.statusCode ?? 0 });
      ws.terminate();
    });
    ws.on('error', (error) => reject(error));
    const closed = new Promise<number>((done) => ws.on('close', (code) => done(code)));
    ws.on('open', () =>
      resolve({
        events,
        closed,
        close: () => ws.close(),
        until: (done, ms = 15_000) =>
          new Promise((ok, fail) => {
            const check = () => {
              if (!done(events)) return;
              clearTimeout(timer);
              waiters.delete(check);
              ok([...events]);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`timed out; events so far: ${events.map((e) => `${e.seq}:${e.type}`).join(', ')}`));
            }, ms);
            waiters.add(check);
            check();
          }),
      }),
    );
  });
}

/** The types of a list of events, in order. */
export const typesOf = (events: readonly WireEvent[]): string[] => events.map((event) => event.type);
