import { createRequire } from 'node:module';

/** The part of a `pg` Client this file uses (`pg` ships no types, and @types/pg is not installed). */
interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<unknown>;
  end(): Promise<void>;
  escapeLiteral(text: string): string;
  escapeIdentifier(text: string): string;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
}
type PgClientClass = new (config: {
  connectionString: string;
  keepAlive: boolean;
  keepAliveInitialDelayMillis: number;
  connectionTimeoutMillis: number;
  query_timeout: number;
  application_name: string;
}) => PgClient;

// `pg` is the driver MikroORM's PostgreSQL package already loads (same version, no second copy). The
// service's bundle (scripts/bundle.mjs) turns this line into a plain `require('pg')`, bundled with knex's.
const { Client } = createRequire(import.meta.url)('pg') as { Client: PgClientClass };

/** NOTIFY payloads must be shorter than 8000 bytes (PostgreSQL's default build). */
export const MAX_PAYLOAD_BYTES = 7_999;

/** One LISTEN connection and how it behaves when it drops. */
export interface NotifyConnectionOptions {
  readonly url: string;
  readonly channels: readonly string[];
  readonly onNotification: (channel: string, payload: string) => void;
  /** A dropped connection or a failed reconnect (the connection keeps retrying). */
  readonly onError: (error: unknown) => void;
  /** Called once LISTEN is in place again after a drop: notifications sent meanwhile were missed. */
  readonly onReconnect: () => void;
  /** Reconnect delays: doubling from `minMs` up to `maxMs` (defaults 100 and 5000). */
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /** Shown in pg_stat_activity. */
  readonly applicationName?: string;
  /**
   * Connecting (LISTEN included) and each query past these is a dropped connection: a frozen server
   * or a black-holed network would otherwise hold every NOTIFY as long as TCP keeps the socket
   * (hours). `heartbeatMs`: how often an idle connection is checked, so that an instance that only
   * listens notices too. Defaults 5000, 5000 and 30000.
   */
  readonly timeouts?: { readonly connectMs?: number; readonly queryMs?: number; readonly heartbeatMs?: number };
}

/** A NOTIFY refused because the connection is down: nothing was sent (it may be sent again later). */
export class ConnectionDownError extends Error {
  constructor() {
    super('The LISTEN connection is down (reconnecting)');
    this.name = 'ConnectionDownError';
  }
}

/**
 * A NOTIFY whose connection dropped (or timed out) before the database answered: it may or may not
 * have gone out. The connection reconnects as after any drop.
 */
export class NotifyInterruptedError extends Error {
  constructor(cause: unknown) {
    super('The LISTEN connection dropped during a NOTIFY (it may or may not have been sent)', { cause });
    this.name = 'NotifyInterruptedError';
  }
}

/**
 * Whether a query failed because the connection failed rather than because the database refused
 * it: no answer from the server (a time-out, a reset, a termination), or an answer that ends the
 * session (class 08, connection exception; class 57P, shutdown or termination by an administrator).
 */
function connectionFailed(error: unknown): boolean {
  const fields = error as { severity?: unknown; code?: unknown } | null;
  if (typeof fields?.severity !== 'string' || typeof fields.code !== 'string') return true;
  return fields.code.startsWith('08') || fields.code.startsWith('57P');
}

/** A dedicated connection that LISTENs, NOTIFYs and reconnects by itself. */
export interface NotifyConnection {
  /** Sends the payloads on one channel in one transaction: listeners get all of them, in order, or none. */
  notify(channel: string, payloads: readonly string[]): Promise<void>;
  /** Ends the connection and stops reconnecting; idempotent. */
  close(): Promise<void>;
}

/**
 * Connects and LISTENs; rejects when the first connection fails (a wrong URL should stop the start).
 * Later drops are retried with backoff until `close()`.
 */
export async function openNotifyConnection(options: NotifyConnectionOptions): Promise<NotifyConnection> {
  const backoff = options.backoff ?? { minMs: 100, maxMs: 5_000 };
  const connectMs = options.timeouts?.connectMs ?? 5_000;
  const queryMs = options.timeouts?.queryMs ?? 5_000;
  const heartbeatMs = options.timeouts?.heartbeatMs ?? 30_000;
  let current: PgClient | null = null;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let failures = 0;

  const connect = async (): Promise<PgClient> => {
    const client = new Client({
      connectionString: options.url,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      connectionTimeoutMillis: connectMs,
      // pg rejects the query at the time-out but keeps the connection: `query` below drops it.
      query_timeout: queryMs,
      application_name: options.applicationName ?? 'console-event-bus',
    });
    // Handlers first: an error event without a listener would crash the process.
    client.on('error', (error) => dropped(client, error));
    client.on('end', () => dropped(client, null));
    client.on('notification', (message) => options.onNotification(message.channel, message.payload ?? ''));
    try {
      await client.connect();
      await client.query(options.channels.map((channel) => `listen ${client.escapeIdentifier(channel)}`).join('; '));
    } catch (error) {
      client.end().catch(() => {});
      throw error;
    }
    return client;
  };

  const dropped = (client: PgClient, error: Error | null): void => {
    if (client !== current) return; // an old client's late events, or a failed attempt that is retried anyway
    current = null;
    client.end().catch(() => {});
    if (closed) return;
    options.onError(error ?? new Error('The LISTEN connection ended'));
    schedule();
  };

  const schedule = (): void => {
    const delay = Math.min(backoff.maxMs, backoff.minMs * 2 ** Math.min(failures, 16));
    failures++;
    // Jitter, so instances cut off together do not all come back in the same instant.
    timer = setTimeout(attempt, delay * (0.8 + Math.random() * 0.4));
  };

  const attempt = async (): Promise<void> => {
    try {
      const client = await connect();
      if (closed) {
        await client.end().catch(() => {});
        return;
      }
      current = client;
      failures = 0;
      options.onReconnect();
    } catch (error) {
      if (closed) return;
      options.onError(error);
      schedule();
    }
  };

  let lastQuery = Date.now();
  /** Queries asked and not yet ended, and the end of the last one asked: the next one waits for it. */
  let asked = 0;
  let busy: Promise<unknown> = Promise.resolve();
  /** Runs `sql` on `client`; a failed connection (a time-out included) drops it, and throws NotifyInterruptedError. */
  const send = async (client: PgClient, sql: string): Promise<void> => {
    lastQuery = Date.now();
    try {
      await client.query(sql);
    } catch (error) {
      if (!connectionFailed(error)) throw error;
      dropped(client, error instanceof Error ? error : new Error(String(error)));
      throw new NotifyInterruptedError(error);
    }
  };
  /**
   * Sends `sql` at once when nothing else is under way (handed to pg before the caller goes on: a NOTIFY leaves
   * before the local fan-out), else right after the query asked before it: one at a time, in order (pg deprecates
   * a second query on a busy client).
   */
  const query = (client: PgClient, sql: string): Promise<void> => {
    const run = asked === 0 ? send(client, sql) : busy.then(() => send(client, sql));
    asked += 1;
    busy = run.catch(() => {}).then(() => void (asked -= 1));
    return run;
  };

  // An idle connection is checked now and then: a listener on a frozen connection would hear nothing, never knowing.
  const heartbeat = setInterval(() => {
    const client = current;
    if (client === null || Date.now() - lastQuery < heartbeatMs) return;
    query(client, 'select 1').catch(() => {}); // a failure is a drop, reported by `dropped`
  }, Math.max(10, Math.floor(heartbeatMs / 2)));
  heartbeat.unref();

  try {
    current = await connect();
  } catch (error) {
    clearInterval(heartbeat);
    throw error;
  }
  return {
    async notify(channel, payloads) {
      const client = current;
      if (client === null) throw new ConnectionDownError();
      if (payloads.length === 0) return;
      // One simple query with several statements runs as one transaction: one round trip, all or nothing.
      const literal = client.escapeLiteral(channel);
      await query(client, payloads.map((payload) => `select pg_notify(${literal}, ${client.escapeLiteral(payload)})`).join('; '));
    },
    async close() {
      closed = true;
      clearTimeout(timer);
      clearInterval(heartbeat);
      const client = current;
      current = null;
      await client?.end().catch(() => {});
    },
  };
}
