import { SocketModeClient } from '@slack/socket-mode';
import { LogLevel, WebClient, type Logger as SlackLogger, type RetryOptions } from '@slack/web-api';
import { ChannelUnavailableError } from '../../ports/channel-port.ts';
import type { Logger } from '../../ports/logger.ts';

/** Slack's own Web API, unless the channel's `api_url` names another (the tests' local Slack). */
export const SLACK_API_URL = 'https://slack.com/api/';

/** The reconnection wait: the first, then doubled up to the most. */
export interface Backoff {
  readonly firstMs: number;
  readonly maxMs: number;
}

/** One Socket Mode envelope as the client hands it over: acknowledge it, and what it carries. */
export interface SlackEnvelope {
  readonly type: string;
  readonly body: Record<string, unknown>;
  /** Slack's `retry_attempt`: more than 0 on a redelivery. */
  readonly retry: number;
  ack(): Promise<void>;
}

/** Who the bot is on the workspace (`auth.test`): its user id (what a mention names) and its bot id (what its posts carry). */
export interface SlackIdentity {
  readonly userId: string;
  readonly botId: string;
}

/** A write's bound: well under the outbox's wait for a channel's answer (a third of its 30 s claim). */
const WRITE_TIMEOUT_MS = 5_000;
/** What the SDK's error says after it waited out a 429's Retry-After (the one failure a write is sent again for). */
const RATE_LIMITED = /rate limit was exceeded/i;
/** The Web API methods that write: sent once by the SDK (see `writes`). */
const WRITE_METHOD = /^chat\./;

/** Tokens look like these; any such text is cut out of a library's log line before it is written. */
const TOKEN = /\bx(?:ox[a-z]|app)-[A-Za-z0-9-]+/g;
/** A Socket Mode URL carries a one-time ticket: never logged either. */
const TICKET = /ticket=[^&\s"']+/g;

/**
 * The Slack libraries' logger, over ours: warnings and errors only, each line without a token or a
 * ticket (they log URLs and, at debug, whole payloads: nothing below warn is written).
 */
function libraryLogger(log: Logger): SlackLogger {
  const line = (msg: unknown[]) => msg.map((part) => (part instanceof Error ? part.message : String(part))).join(' ').replace(TOKEN, '[token]').replace(TICKET, 'ticket=[ticket]');
  let level = LogLevel.WARN;
  return {
    debug() {},
    info() {},
    warn: (...msg: unknown[]) => log.warn({ slack: line(msg) }, 'slack library'),
    error: (...msg: unknown[]) => log.warn({ slack: line(msg) }, 'slack library'),
    setLevel: (next: LogLevel) => {
      level = next;
    },
    getLevel: () => level,
    setName() {},
  };
}

/** A Web API failure that says the platform cannot be reached now (a network error, a server error). */
function unreachable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'slack_webapi_request_error' || code === 'slack_webapi_http_error';
}

/**
 * A slack channel's bot (contract section 10): the Web API client (bot token) and the Socket Mode
 * client (app-level token), both from Slack's own SDK pointed at `apiUrl`. The bot is online while its
 * socket is connected; it reconnects by itself (a dropped socket, a `disconnect` from Slack, the server
 * away) with a doubling wait. The tokens live in the clients only: never logged, never returned.
 */
export class SlackConnection {
  readonly web: WebClient;
  private readonly writes: WebClient;
  private readonly socket: SocketModeClient;
  private readonly log: Logger;
  private readonly backoff: Backoff;
  private identity: SlackIdentity | null = null;
  private connected = false;
  private closed = false;
  private started = false;
  private wait: number;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private readonly envelopeListeners = new Set<(envelope: SlackEnvelope) => void>();
  private readonly onlineListeners = new Set<() => void>();

  constructor(options: { appToken: string; botToken: string; apiUrl: string | null; log: Logger; backoff?: Backoff }) {
    this.log = options.log;
    this.backoff = options.backoff ?? { firstMs: 1_000, maxMs: 30_000 };
    this.wait = this.backoff.firstMs;
    const slackApiUrl = options.apiUrl ?? SLACK_API_URL;
    const logger = libraryLogger(options.log);
    // Reads: a network failure is retried a few times, quickly; a 429 waits its Retry-After.
    this.web = new WebClient(options.botToken, {
      slackApiUrl, logger, timeout: 10_000, allowAbsoluteUrls: false,
      retryConfig: { retries: 3, factor: 2, minTimeout: 100, maxTimeout: 2_000 },
    });
    // Writes (posts, updates): never sent again by the SDK after a time-out or a lost answer (the post may have
    // landed; the outbox asks again, and a delivery handed over before looks for its post first). Only a 429 is
    // sent again, after its Retry-After, holding the client's queue so a thread's posts keep their order.
    this.writes = new WebClient(options.botToken, {
      slackApiUrl, logger, timeout: WRITE_TIMEOUT_MS, allowAbsoluteUrls: false,
      retryConfig: {
        retries: 5, minTimeout: 0, maxTimeout: 0,
        onFailedAttempt: (error: Error) => {
          if (!RATE_LIMITED.test(error.message)) throw error;
        },
        // p-retry's hook (the SDK's retry runs on p-retry): throwing here ends the retries with that error.
      } as RetryOptions,
    });
    // The socket: reconnected here (the SDK's own reconnection leaves a rejection unhandled when Slack is unreachable).
    this.socket = new SocketModeClient({
      appToken: options.appToken, logger, autoReconnectEnabled: false,
      clientOptions: { slackApiUrl, timeout: 10_000, retryConfig: { retries: 0 }, allowAbsoluteUrls: false },
    });
    this.socket.on('connected', () => {
      if (this.closed) return;
      this.connected = true;
      this.wait = this.backoff.firstMs;
      this.log.info({}, 'slack socket connected');
      for (const listener of this.onlineListeners) listener();
    });
    this.socket.on('disconnected', () => {
      const was = this.connected;
      this.connected = false;
      if (was) this.log.warn({}, 'slack socket disconnected; reconnecting');
      this.reconnectLater();
    });
    this.socket.on('slack_event', (event: { ack: () => Promise<void>; type: string; body: unknown; retry_num?: number }) => {
      const envelope: SlackEnvelope = {
        type: event.type,
        body: (typeof event.body === 'object' && event.body !== null ? event.body : {}) as Record<string, unknown>,
        retry: typeof event.retry_num === 'number' ? event.retry_num : 0,
        ack: () => event.ack(),
      };
      for (const listener of this.envelopeListeners) listener(envelope);
    });
  }

  /** Whether the socket is connected (and the bot known): what places and deliveries need. */
  get online(): boolean {
    return this.connected && this.identity !== null && !this.closed;
  }

  /** The bot's ids, once `auth.test` answered. */
  get bot(): SlackIdentity | null {
    return this.identity;
  }

  /** Throws ChannelUnavailableError unless online. */
  ensureOnline(): SlackIdentity {
    if (!this.online || this.identity === null) throw new ChannelUnavailableError('The Slack workspace cannot be reached now (the bot is reconnecting)');
    return this.identity;
  }

  /** Connects (and keeps reconnecting until closed). */
  start(): void {
    if (this.started) return;
    this.started = true;
    void this.connect();
  }

  /** A Web API call with the bot token: rejects with ChannelUnavailableError when Slack cannot be reached. */
  async call<T = Record<string, unknown>>(method: string, args: Record<string, unknown>): Promise<T> {
    try {
      return (await (WRITE_METHOD.test(method) ? this.writes : this.web).apiCall(method, args)) as T;
    } catch (error) {
      if (unreachable(error)) throw new ChannelUnavailableError(`Slack did not answer ${method}`, { cause: error });
      throw error;
    }
  }

  /** Calls `listener` with every envelope received; answers a function that stops it. */
  onEnvelope(listener: (envelope: SlackEnvelope) => void): () => void {
    this.envelopeListeners.add(listener);
    return () => this.envelopeListeners.delete(listener);
  }

  /** Calls `listener` each time the socket is connected (again). */
  onOnline(listener: () => void): () => void {
    this.onlineListeners.add(listener);
    return () => this.onlineListeners.delete(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.connected = false;
    await this.socket.disconnect().catch(() => {});
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    try {
      if (this.identity === null) {
        const auth = await this.call<{ user_id?: string; bot_id?: string }>('auth.test', {});
        if (typeof auth.user_id !== 'string' || typeof auth.bot_id !== 'string') throw new Error('auth.test named no bot user');
        this.identity = { userId: auth.user_id, botId: auth.bot_id };
      }
      await this.socket.start();
      // Closed while it connected: the socket just opened is closed too.
      if (this.closed) await this.socket.disconnect().catch(() => {});
    } catch (error) {
      if (this.closed) return;
      this.log.warn({ err: { message: String((error as Error)?.message ?? error).replace(TOKEN, '[token]') }, retryInMs: this.wait }, 'slack could not be reached; retrying');
      this.reconnectLater();
    }
  }

  private reconnectLater(): void {
    if (this.closed || this.timer !== null) return;
    const wait = this.wait;
    this.wait = Math.min(this.wait * 2, this.backoff.maxMs);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.connect();
    }, wait);
    this.timer.unref?.();
  }
}
