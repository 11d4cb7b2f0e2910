/**
 * A local Slack of the tests' own: one HTTP server on 127.0.0.1 answering the Slack Web API methods the Slack
 * channel calls (at `<apiUrl><method>`, as `WebClient({ slackApiUrl })` posts them) and, on the same port, the
 * Socket Mode WebSocket that `apps.connections.open` hands out. Shapes follow Slack's documented payloads and were
 * checked against what `@slack/web-api` 8.2.0, `@slack/socket-mode` 3.1.0 and `@slack/bolt` 5.1.0 send and expect
 * (see test/slack/fake-slack.test.ts):
 * - WebClient POSTs `application/x-www-form-urlencoded` bodies; every non-scalar argument (`blocks`, `metadata`,
 *   `attachments`) is a JSON string inside the form, booleans are `true`/`false` strings, and the token travels in
 *   `Authorization: Bearer`. JSON bodies and query strings are accepted too, as Slack accepts them.
 * - The Socket Mode client acknowledges with `{"envelope_id", "payload": {}}` (always a `payload`, empty when
 *   `ack()` got nothing), treats `hello` as "connected", and on `disconnect` closes with a close frame and
 *   reconnects after `clientPingTimeout` × the number of consecutive failures (5 s by default: tests lower it).
 * - With several connections open (several instances of an app), each envelope goes to one of them, in turn, as
 *   Slack sends each to one connection; `redeliverToOthers` sends each to the others too, as a redelivery.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Duplex } from 'node:stream';
import { WebSocket, WebSocketServer } from 'ws';

export interface FakeSlackOptions {
  /** How long an envelope may stay unacknowledged before it is redelivered (Slack: 3 s). */
  readonly ackTimeoutMs?: number;
  /** How many times an unacknowledged events_api envelope is redelivered (Slack: 3). */
  readonly maxRetries?: number;
  /** The largest page `conversations.list/history/replies` answer, whatever `limit` asks (Slack: 1000). */
  readonly maxPageSize?: number;
  /** Send a WebSocket ping every so many ms on each socket (off by default; Slack pings every few seconds). */
  readonly pingIntervalMs?: number;
  /** Send the bot's own posts and edits back over the socket as `message` events, as Slack does (default true). */
  readonly echoBotMessages?: boolean;
  /** A fixed port (default: a free one the kernel picks). */
  readonly port?: number;
}

export interface SlackMessage {
  type: 'message';
  ts: string;
  thread_ts?: string;
  parent_user_id?: string;
  user: string;
  bot_id?: string;
  app_id?: string;
  subtype?: string;
  text: string;
  blocks?: unknown[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  reply_count?: number;
  reply_users?: string[];
  reply_users_count?: number;
  latest_reply?: string;
  edited?: { user: string; ts: string };
  team: string;
}

export interface EphemeralRecord {
  channel: string;
  user: string;
  text: string;
  thread_ts?: string;
  blocks?: unknown;
  message_ts: string;
}

export interface CallRecord {
  method: string;
  args: Record<string, unknown>;
  token: string | null;
  /** The request's Content-Type (WebClient: application/x-www-form-urlencoded). */
  contentType: string | null;
  /** The HTTP status answered (200, or 429 for a rate-limited call). */
  status: number;
  /** The `error` of an `ok: false` answer. */
  error?: string;
}

export interface EnvelopeRecord {
  envelope_id: string;
  type: 'events_api' | 'interactive';
  retry_attempt: number;
  retry_reason: string;
  sentAt: number;
  ackedAt: number | null;
  /** The Socket Mode connection it was sent on, numbered from 1 in the order they opened. */
  connection: number;
  /** What the client sent with its ack (`{}` from `ack()` without a response). */
  ackPayload?: unknown;
  payload: Record<string, unknown>;
}

export interface FakeSlack {
  readonly apiUrl: string;
  readonly port: number;
  readonly appToken: string;
  readonly botToken: string;
  readonly botUserId: string;
  readonly botId: string;
  readonly appId: string;
  readonly teamId: string;
  addChannel(c: { id: string; name: string; member?: boolean; archived?: boolean; readOnly?: boolean; private?: boolean }): void;
  addUser(u: { id: string; name: string; botId?: string }): void;
  /** The `im` channel id of a user's direct conversation with the bot (created on first use). */
  imChannel(user: string): string;
  /**
   * A person (or another bot) posts. `lost`: the message is stored but no event is ever sent for it (an event
   * Slack gave up on, its retries spent while the app was away): only a read of the thread or channel finds it.
   */
  post(user: string, channel: string, text: string, opts?: { threadTs?: string; subtype?: string; lost?: boolean }): Promise<string>;
  dm(user: string, text: string): Promise<string>;
  click(user: string, at: { channel: string; ts: string; actionId: string; value: string }): Promise<void>;
  /** A channel's top-level messages (and broadcast replies), oldest first, as conversations.history has them. */
  history(channel: string): SlackMessage[];
  /** A thread's messages: the parent first, then the replies oldest first. */
  replies(channel: string, ts: string): SlackMessage[];
  /** Every message of a channel, replies included, oldest first. */
  messages(channel: string): SlackMessage[];
  readonly ephemerals: EphemeralRecord[];
  readonly calls: CallRecord[];
  readonly envelopes: EnvelopeRecord[];
  connections(): number;
  connected(ms?: number): Promise<void>;
  dropSockets(): void;
  /**
   * From now on (until called with false), each events_api envelope is sent to its connection as ever and, at
   * once, to every other open connection as a redelivery (`retry_attempt` one more, `retry_reason` `timeout`):
   * Slack's redelivery to another connection at its worst, where the first had it too (its ack late or lost).
   */
  redeliverToOthers(on: boolean): void;
  disconnect(reason?: string): void;
  rateLimit(method: string, times: number, retryAfterSeconds: number): void;
  /** The next `times` calls of `method` do what they do at once and are answered only after `ms` (a slow Slack, a lost answer). */
  answerLate(method: string, times: number, ms: number): void;
  /**
   * The next `times` acks of events_api envelopes carrying a message of this text are lost on their way (as a
   * dropped packet would lose them): the envelope goes unacknowledged and Slack redelivers it on the same
   * connection after the ack time-out (`retry_attempt` one more, `retry_reason` `timeout`).
   */
  loseAcksOf(text: string, times?: number): void;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

interface Channel {
  id: string;
  name: string;
  member: boolean;
  archived: boolean;
  readOnly: boolean;
  private: boolean;
  im: boolean;
  imUser?: string;
  created: number;
}

interface StoredMessage {
  ts: string;
  channel: string;
  threadTs?: string;
  user: string;
  botId?: string;
  appId?: string;
  subtype?: string;
  text: string;
  blocks?: unknown[];
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
  edited?: { user: string; ts: string };
}

interface Delivery {
  envelope_id: string;
  type: 'events_api' | 'interactive';
  payload: Record<string, unknown>;
  acceptsResponsePayload: boolean;
  attempt: number;
  reason: string;
  acked: boolean;
  record: EnvelopeRecord | null;
  /** The records of the copies `redeliverToOthers` sent, by the connection each went to. */
  copies: Map<WebSocket, EnvelopeRecord>;
  socket: WebSocket | null;
  timer: NodeJS.Timeout | null;
}

class SlackApiError extends Error {
  constructor(
    readonly code: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(code);
  }
}

const LIMITS = { sectionText: 3000, buttonText: 75, blocks: 50, text: 40_000, headerText: 150, actionsElements: 25 };

export async function startFakeSlack(options: FakeSlackOptions = {}): Promise<FakeSlack> {
  const fake = new FakeSlackServer(options);
  await fake.start();
  return fake;
}

class FakeSlackServer implements FakeSlack {
  readonly appToken = `xapp-1-AFAKECONSOLE-1-${randomBytes(16).toString('hex')}`;
  readonly botToken = `xoxb-1-1-${randomBytes(12).toString('hex')}`;
  readonly botUserId = 'UCONSOLEBOT';
  readonly botId = 'BCONSOLE';
  readonly appId = 'ACONSOLE';
  readonly teamId = 'TCONSOLE';
  readonly ephemerals: EphemeralRecord[] = [];
  readonly calls: CallRecord[] = [];
  readonly envelopes: EnvelopeRecord[] = [];

  readonly #ackTimeoutMs: number;
  readonly #maxRetries: number;
  readonly #maxPageSize: number;
  readonly #pingIntervalMs: number;
  readonly #echo: boolean;
  #port: number;
  #server: Server | null = null;
  readonly #wss = new WebSocketServer({ noServer: true });
  readonly #sockets = new Set<WebSocket>();
  readonly #pingTimers = new Map<WebSocket, NodeJS.Timeout>();
  readonly #tickets = new Set<string>();
  readonly #channels = new Map<string, Channel>();
  readonly #users = new Map<string, { id: string; name: string; botId?: string }>();
  readonly #ims = new Map<string, string>();
  readonly #messages: StoredMessage[] = [];
  readonly #deliveries = new Map<string, Delivery>();
  readonly #waiting: Delivery[] = [];
  readonly #rateLimits = new Map<string, { times: number; retryAfter: number }>();
  readonly #lateAnswers = new Map<string, { times: number; ms: number }>();
  readonly #acksToLose = new Map<string, number>();
  readonly #connectionWaiters = new Set<() => void>();
  #lastTsMicros = 0;
  #roundRobin = 0;
  #closed = false;
  #redeliverToOthers = false;
  readonly #connectionNumbers = new Map<WebSocket, number>();
  #connectionsOpened = 0;

  constructor(options: FakeSlackOptions) {
    this.#ackTimeoutMs = options.ackTimeoutMs ?? 3000;
    this.#maxRetries = options.maxRetries ?? 3;
    this.#maxPageSize = options.maxPageSize ?? 1000;
    this.#pingIntervalMs = options.pingIntervalMs ?? 0;
    this.#echo = options.echoBotMessages ?? true;
    this.#port = options.port ?? 0;
    this.#users.set(this.botUserId, { id: this.botUserId, name: 'console', botId: this.botId });
  }

  get port(): number {
    return this.#port;
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.#port}/api/`;
  }

  // ---------------------------------------------------------------- world

  addChannel(c: { id: string; name: string; member?: boolean; archived?: boolean; readOnly?: boolean; private?: boolean }): void {
    this.#channels.set(c.id, {
      id: c.id,
      name: c.name,
      member: c.member ?? true,
      archived: c.archived ?? false,
      readOnly: c.readOnly ?? false,
      private: c.private ?? false,
      im: false,
      created: Math.floor(Date.now() / 1000),
    });
  }

  addUser(u: { id: string; name: string; botId?: string }): void {
    this.#users.set(u.id, { ...u });
  }

  imChannel(user: string): string {
    let id = this.#ims.get(user);
    if (id === undefined) {
      id = `D${user.replace(/^[A-Z]/, '')}${this.#ims.size}`.toUpperCase();
      this.#ims.set(user, id);
      this.#channels.set(id, {
        id,
        name: user,
        member: true,
        archived: false,
        readOnly: false,
        private: true,
        im: true,
        imUser: user,
        created: Math.floor(Date.now() / 1000),
      });
    }
    return id;
  }

  async post(user: string, channel: string, text: string, opts: { threadTs?: string; subtype?: string; lost?: boolean } = {}): Promise<string> {
    const ch = this.#channels.get(channel);
    if (ch === undefined) throw new Error(`fake slack: no channel ${channel}`);
    const who = this.#users.get(user);
    if (who === undefined) throw new Error(`fake slack: no user ${user}`);
    let threadTs: string | undefined;
    if (opts.threadTs !== undefined) {
      const parent = this.#find(channel, opts.threadTs);
      if (parent === undefined) throw new Error(`fake slack: no message ${opts.threadTs} in ${channel}`);
      threadTs = parent.threadTs ?? parent.ts;
    }
    // What a person typed, as Slack carries it: `&`, `<` and `>` escaped, a mention made in the client kept as markup.
    text = slackWire(text);
    const message: StoredMessage = {
      ts: this.#nextTs(),
      channel,
      user,
      text,
      blocks: richTextBlocks(text),
      ...(threadTs !== undefined ? { threadTs } : {}),
      ...(who.botId !== undefined ? { botId: who.botId, appId: `A${who.botId.slice(1)}` } : {}),
      ...(opts.subtype !== undefined ? { subtype: opts.subtype } : {}),
    };
    this.#messages.push(message);
    if (ch.member && opts.lost !== true) {
      const event = this.#messageEvent(message, ch);
      if (who.botId === undefined) event.client_msg_id = randomUUID();
      const sends = [this.#deliver('events_api', this.#eventCallback(event))];
      if (text.includes(`<@${this.botUserId}>`) && !ch.im) {
        const mention: Record<string, unknown> = {
          type: 'app_mention',
          user,
          text,
          ts: message.ts,
          channel,
          event_ts: message.ts,
          team: this.teamId,
          blocks: message.blocks,
          ...(threadTs !== undefined ? { thread_ts: threadTs } : {}),
          ...(who.botId !== undefined ? { bot_id: who.botId } : { client_msg_id: event.client_msg_id }),
        };
        sends.push(this.#deliver('events_api', this.#eventCallback(mention)));
      }
      await Promise.all(sends);
    }
    return message.ts;
  }

  dm(user: string, text: string): Promise<string> {
    return this.post(user, this.imChannel(user), text);
  }

  async click(user: string, at: { channel: string; ts: string; actionId: string; value: string }): Promise<void> {
    const ch = this.#channels.get(at.channel);
    if (ch === undefined) throw new Error(`fake slack: no channel ${at.channel}`);
    const message = this.#find(at.channel, at.ts);
    if (message === undefined) throw new Error(`fake slack: no message ${at.ts} in ${at.channel}`);
    const who = this.#users.get(user);
    if (who === undefined) throw new Error(`fake slack: no user ${user}`);
    let found: { block: Record<string, unknown>; element: Record<string, unknown> } | undefined;
    for (const block of (message.blocks ?? []) as Record<string, unknown>[]) {
      const elements = [...(Array.isArray(block.elements) ? block.elements : []), ...(block.accessory ? [block.accessory] : [])];
      for (const element of elements as Record<string, unknown>[]) {
        if (element.action_id === at.actionId && (element.value === at.value || element.value === undefined)) found = { block, element };
      }
    }
    if (found === undefined) throw new Error(`fake slack: message ${at.ts} has no button ${at.actionId}=${at.value}`);
    const actionTs = this.#nextTs();
    const payload = {
      type: 'block_actions',
      user: { id: user, username: who.name, name: who.name, team_id: this.teamId },
      api_app_id: this.appId,
      token: 'fake-verification-token',
      container: {
        type: 'message',
        message_ts: message.ts,
        channel_id: at.channel,
        is_ephemeral: false,
        ...(message.threadTs !== undefined ? { thread_ts: message.threadTs } : {}),
      },
      trigger_id: `${Date.now()}.${randomBytes(6).toString('hex')}`,
      team: { id: this.teamId, domain: 'fake-console' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: at.channel, name: ch.im ? 'directmessage' : ch.name },
      message: this.#view(message, true),
      state: { values: {} },
      response_url: `http://127.0.0.1:${this.#port}/actions/${randomBytes(8).toString('hex')}`,
      actions: [
        {
          action_id: at.actionId,
          block_id: found.block.block_id,
          value: at.value,
          text: found.element.text,
          type: found.element.type ?? 'button',
          action_ts: actionTs,
        },
      ],
    };
    await this.#deliver('interactive', payload);
  }

  history(channel: string): SlackMessage[] {
    return this.#messages.filter((m) => m.channel === channel && isTopLevel(m)).map((m) => this.#view(m, true));
  }

  replies(channel: string, ts: string): SlackMessage[] {
    const parent = this.#find(channel, ts);
    if (parent === undefined) return [];
    const root = parent.threadTs ?? parent.ts;
    return this.#messages.filter((m) => m.channel === channel && (m.ts === root || m.threadTs === root)).map((m) => this.#view(m, true));
  }

  messages(channel: string): SlackMessage[] {
    return this.#messages.filter((m) => m.channel === channel).map((m) => this.#view(m, true));
  }

  // ---------------------------------------------------------------- faults and lifecycle

  connections(): number {
    return this.#sockets.size;
  }

  connected(ms = 5000): Promise<void> {
    if (this.#sockets.size > 0) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#connectionWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#connectionWaiters.delete(done);
        reject(new Error(`fake slack: no Socket Mode connection within ${ms} ms`));
      }, ms);
      this.#connectionWaiters.add(done);
    });
  }

  dropSockets(): void {
    for (const socket of [...this.#sockets]) {
      socket.terminate();
      this.#onSocketClosed(socket);
    }
  }

  redeliverToOthers(on: boolean): void {
    this.#redeliverToOthers = on;
  }

  disconnect(reason = 'refresh_requested'): void {
    for (const socket of this.#sockets) {
      socket.send(JSON.stringify({ type: 'disconnect', reason, debug_info: { host: 'applink-fake' } }));
    }
  }

  rateLimit(method: string, times: number, retryAfterSeconds: number): void {
    this.#rateLimits.set(method, { times, retryAfter: retryAfterSeconds });
  }

  answerLate(method: string, times: number, ms: number): void {
    this.#lateAnswers.set(method, { times, ms });
  }

  loseAcksOf(text: string, times = 1): void {
    this.#acksToLose.set(text, times);
  }

  async start(): Promise<void> {
    if (this.#server !== null) return;
    this.#closed = false;
    const server = createServer((req, res) => this.#onRequest(req, res));
    server.on('upgrade', (req, socket, head) => this.#onUpgrade(req, socket, head));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#port = (server.address() as AddressInfo).port;
    this.#server = server;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === null) return;
    this.#server = null;
    this.dropSockets();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }

  /**
   * The end of the fake: sockets still open get a close frame (1001) and a moment to finish the handshake before the
   * server stops. Abruptly cut sockets would leave @slack/socket-mode 3.1.0 with a 30 s timer when it was closing
   * itself at that moment (its second `disconnect()` overwrites the handle of the first close-handshake timer).
   * Disconnect the clients first: a client still running would try to reconnect to a server that is gone.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const open = [...this.#sockets];
    if (open.length > 0) {
      await Promise.race([
        Promise.all(open.map((ws) => new Promise<void>((resolve) => {
          if (ws.readyState === WebSocket.CLOSED) return resolve();
          ws.once('close', () => resolve());
          if (ws.readyState === WebSocket.OPEN) ws.close(1001, 'going away');
        }))),
        new Promise<void>((resolve) => setTimeout(resolve, 1000).unref()),
      ]);
    }
    await this.stop();
    for (const delivery of this.#deliveries.values()) this.#clearTimer(delivery);
    for (const timer of this.#pingTimers.values()) clearInterval(timer);
    this.#pingTimers.clear();
    this.#wss.close();
  }

  // ---------------------------------------------------------------- Socket Mode

  #onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const ticket = url.searchParams.get('ticket');
    if (url.pathname !== '/link/' || ticket === null || !this.#tickets.delete(ticket)) {
      socket.end('HTTP/1.1 401 Unauthorized\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    this.#wss.handleUpgrade(req, socket, head, (ws) => this.#onSocket(ws));
  }

  #onSocket(ws: WebSocket): void {
    this.#sockets.add(ws);
    this.#connectionNumbers.set(ws, ++this.#connectionsOpened);
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      let parsed: unknown;
      try {
        parsed = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { envelope_id?: unknown }).envelope_id === 'string') {
        const envelopeId = (parsed as { envelope_id: string }).envelope_id;
        if (this.#ackLost(envelopeId)) return;
        this.#onAck(envelopeId, (parsed as { payload?: unknown }).payload, ws);
      }
    });
    ws.on('close', () => this.#onSocketClosed(ws));
    ws.on('error', () => {});
    if (this.#pingIntervalMs > 0) {
      this.#pingTimers.set(
        ws,
        setInterval(() => ws.ping(), this.#pingIntervalMs),
      );
    }
    ws.send(
      JSON.stringify({
        type: 'hello',
        num_connections: this.#sockets.size,
        debug_info: { host: 'applink-fake-1', build_number: 1, approximate_connection_time: 18060 },
        connection_info: { app_id: this.appId },
      }),
    );
    for (const wake of [...this.#connectionWaiters]) wake();
    const waiting = this.#waiting.splice(0);
    for (const delivery of waiting) void this.#send(delivery);
  }

  #onSocketClosed(ws: WebSocket): void {
    this.#sockets.delete(ws);
    const ping = this.#pingTimers.get(ws);
    if (ping !== undefined) clearInterval(ping);
    this.#pingTimers.delete(ws);
    for (const delivery of this.#deliveries.values()) {
      if (delivery.socket !== ws || delivery.acked) continue;
      this.#clearTimer(delivery);
      delivery.socket = null;
      // Slack redelivers what the closed connection never acknowledged, counting it as a retry.
      this.#retry(delivery, 'connection_closed');
    }
  }

  /** Whether this ack is one {@link FakeSlack.loseAcksOf} asked to lose (counted down when it is). */
  #ackLost(envelopeId: string): boolean {
    const delivery = this.#deliveries.get(envelopeId);
    if (delivery === undefined || delivery.type !== 'events_api') return false;
    const text = (delivery.payload.event as { text?: unknown } | undefined)?.text;
    const left = typeof text === 'string' ? this.#acksToLose.get(text) ?? 0 : 0;
    if (left === 0) return false;
    this.#acksToLose.set(text as string, left - 1);
    return true;
  }

  #onAck(envelopeId: string, payload: unknown, ws: WebSocket): void {
    const delivery = this.#deliveries.get(envelopeId);
    if (delivery === undefined) return;
    // A copy's ack is its own record's; any other is the envelope's last send's, as it always was.
    const record = delivery.copies.get(ws) ?? (!delivery.acked || ws === delivery.socket ? delivery.record : null);
    if (record !== null && record.ackedAt === null) {
      record.ackedAt = Date.now();
      record.ackPayload = payload;
    }
    if (delivery.acked) return;
    delivery.acked = true;
    this.#clearTimer(delivery);
  }

  #deliver(type: 'events_api' | 'interactive', payload: Record<string, unknown>): Promise<void> {
    const delivery: Delivery = {
      envelope_id: randomUUID(),
      type,
      payload,
      acceptsResponsePayload: type === 'interactive',
      attempt: 0,
      reason: '',
      acked: false,
      record: null,
      copies: new Map(),
      socket: null,
      timer: null,
    };
    this.#deliveries.set(delivery.envelope_id, delivery);
    return this.#send(delivery);
  }

  #send(delivery: Delivery): Promise<void> {
    const open = [...this.#sockets].filter((s) => s.readyState === WebSocket.OPEN);
    if (open.length === 0 || this.#closed) {
      this.#waiting.push(delivery);
      return Promise.resolve();
    }
    const socket = open[this.#roundRobin++ % open.length]!;
    const envelope: Record<string, unknown> = {
      envelope_id: delivery.envelope_id,
      type: delivery.type,
      payload: delivery.payload,
      accepts_response_payload: delivery.acceptsResponsePayload,
    };
    if (delivery.type === 'events_api') {
      envelope.retry_attempt = delivery.attempt;
      envelope.retry_reason = delivery.reason;
    }
    const record: EnvelopeRecord = {
      envelope_id: delivery.envelope_id,
      type: delivery.type,
      retry_attempt: delivery.attempt,
      retry_reason: delivery.reason,
      sentAt: Date.now(),
      ackedAt: null,
      connection: this.#connectionNumbers.get(socket) ?? 0,
      payload: delivery.payload,
    };
    this.envelopes.push(record);
    delivery.record = record;
    delivery.socket = socket;
    delivery.timer = setTimeout(() => {
      delivery.timer = null;
      if (!delivery.acked) this.#retry(delivery, 'timeout');
    }, this.#ackTimeoutMs);
    const sent = [new Promise<void>((resolve) => socket.send(JSON.stringify(envelope), () => resolve()))];
    if (this.#redeliverToOthers && delivery.type === 'events_api') {
      for (const other of open) {
        if (other === socket) continue;
        const copy: EnvelopeRecord = { ...record, retry_attempt: delivery.attempt + 1, retry_reason: 'timeout', connection: this.#connectionNumbers.get(other) ?? 0 };
        this.envelopes.push(copy);
        delivery.copies.set(other, copy);
        const copied = { ...envelope, retry_attempt: copy.retry_attempt, retry_reason: copy.retry_reason };
        sent.push(new Promise<void>((resolve) => other.send(JSON.stringify(copied), () => resolve())));
      }
    }
    return Promise.all(sent).then(() => {});
  }

  /** Slack retries events (at most `maxRetries` times); an unacknowledged interactive payload is not sent again. */
  #retry(delivery: Delivery, reason: string): void {
    if (delivery.type !== 'events_api' || delivery.attempt >= this.#maxRetries || this.#closed) return;
    delivery.attempt += 1;
    delivery.reason = reason;
    void this.#send(delivery);
  }

  #clearTimer(delivery: Delivery): void {
    if (delivery.timer !== null) clearTimeout(delivery.timer);
    delivery.timer = null;
  }

  #eventCallback(event: Record<string, unknown>): Record<string, unknown> {
    return {
      token: 'fake-verification-token',
      team_id: this.teamId,
      context_team_id: this.teamId,
      context_enterprise_id: null,
      api_app_id: this.appId,
      event,
      type: 'event_callback',
      event_id: `Ev${randomBytes(5).toString('hex').toUpperCase()}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ enterprise_id: null, team_id: this.teamId, user_id: this.botUserId, is_bot: true, is_enterprise_install: false }],
      is_ext_shared_channel: false,
      event_context: `4-${randomBytes(12).toString('base64url')}`,
    };
  }

  #messageEvent(message: StoredMessage, ch: Channel): Record<string, unknown> {
    const event: Record<string, unknown> = { ...this.#view(message, false), channel: ch.id, event_ts: message.ts, channel_type: channelType(ch) };
    if (message.threadTs !== undefined) event.parent_user_id = this.#find(ch.id, message.threadTs)?.user;
    return event;
  }

  #echoEvent(event: Record<string, unknown>): void {
    if (this.#echo) void this.#deliver('events_api', this.#eventCallback(event));
  }

  // ---------------------------------------------------------------- storage helpers

  #nextTs(): string {
    const now = Date.now() * 1000;
    this.#lastTsMicros = now > this.#lastTsMicros ? now : this.#lastTsMicros + 1;
    const seconds = Math.floor(this.#lastTsMicros / 1e6);
    return `${seconds}.${String(this.#lastTsMicros % 1e6).padStart(6, '0')}`;
  }

  #find(channel: string, ts: string): StoredMessage | undefined {
    return this.#messages.find((m) => m.channel === channel && m.ts === ts);
  }

  /** A message as Slack shows it; `withMetadata` false leaves metadata out (as without include_all_metadata). */
  #view(m: StoredMessage, withMetadata: boolean): SlackMessage {
    const view: SlackMessage = { type: 'message', ts: m.ts, user: m.user, text: m.text, team: this.teamId };
    if (m.subtype !== undefined) view.subtype = m.subtype;
    if (m.botId !== undefined) view.bot_id = m.botId;
    if (m.appId !== undefined) view.app_id = m.appId;
    if (m.blocks !== undefined) view.blocks = m.blocks;
    if (m.edited !== undefined) view.edited = { ...m.edited };
    if (withMetadata && m.metadata !== undefined) view.metadata = m.metadata;
    if (m.threadTs !== undefined) {
      view.thread_ts = m.threadTs;
      view.parent_user_id = this.#find(m.channel, m.threadTs)?.user ?? '';
    } else {
      const replies = this.#messages.filter((r) => r.channel === m.channel && r.threadTs === m.ts);
      if (replies.length > 0) {
        const users = [...new Set(replies.map((r) => r.user))];
        view.thread_ts = m.ts;
        view.reply_count = replies.length;
        view.reply_users = users;
        view.reply_users_count = users.length;
        view.latest_reply = replies[replies.length - 1]!.ts;
      }
    }
    return view;
  }

  // ---------------------------------------------------------------- Web API

  #onRequest(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const match = /^\/api\/([A-Za-z0-9_.]+)$/.exec(url.pathname);
      if (match === null) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const method = match[1]!;
      const args = decodeArgs(url, req.headers['content-type'], Buffer.concat(chunks).toString('utf8'));
      const auth = req.headers.authorization;
      const bearer = typeof auth === 'string' && auth.startsWith('Bearer ') ? auth.slice('Bearer '.length) : null;
      const token = bearer ?? (typeof args.token === 'string' ? args.token : null);
      delete args.token;
      const call: CallRecord = { method, args, token, contentType: req.headers['content-type'] ?? null, status: 200 };
      this.calls.push(call);
      const limit = this.#rateLimits.get(method);
      if (limit !== undefined && limit.times > 0) {
        limit.times -= 1;
        call.status = 429;
        call.error = 'ratelimited';
        res
          .writeHead(429, { 'content-type': 'application/json; charset=utf-8', 'retry-after': String(limit.retryAfter) })
          .end(JSON.stringify({ ok: false, error: 'ratelimited' }));
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = { ok: true, ...this.#call(method, args, token) };
      } catch (error) {
        if (!(error instanceof SlackApiError)) throw error;
        body = { ok: false, error: error.code, ...error.extra };
        call.error = error.code;
      }
      const late = this.#lateAnswers.get(method);
      if (late !== undefined && late.times > 0) {
        late.times -= 1;
        setTimeout(() => {
          if (!res.destroyed) res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
        }, late.ms).unref();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
    });
  }

  #call(method: string, args: Record<string, unknown>, token: string | null): Record<string, unknown> {
    const handlers: Record<string, (a: Record<string, unknown>) => Record<string, unknown>> = {
      'auth.test': () => this.#authTest(),
      'apps.connections.open': () => this.#connectionsOpen(),
      'conversations.list': (a) => this.#conversationsList(a),
      'conversations.info': (a) => this.#conversationsInfo(a),
      'conversations.history': (a) => this.#conversationsHistory(a),
      'conversations.replies': (a) => this.#conversationsReplies(a),
      'chat.postMessage': (a) => this.#postMessage(a),
      'chat.postEphemeral': (a) => this.#postEphemeral(a),
      'chat.update': (a) => this.#update(a),
    };
    const handler = handlers[method];
    if (handler === undefined) throw new SlackApiError('unknown_method');
    if (token === null || token === '') throw new SlackApiError('not_authed');
    if (token !== this.appToken && token !== this.botToken) throw new SlackApiError('invalid_auth');
    if ((method === 'apps.connections.open') !== (token === this.appToken)) throw new SlackApiError('not_allowed_token_type');
    return handler(args);
  }

  #authTest(): Record<string, unknown> {
    return {
      url: 'https://fake-console.slack.com/',
      team: 'Fake Console',
      user: 'console',
      team_id: this.teamId,
      user_id: this.botUserId,
      bot_id: this.botId,
      is_enterprise_install: false,
    };
  }

  #connectionsOpen(): Record<string, unknown> {
    const ticket = randomBytes(16).toString('hex');
    this.#tickets.add(ticket);
    return { url: `ws://127.0.0.1:${this.#port}/link/?ticket=${ticket}&app_id=${this.appId}` };
  }

  /** The channel the bot may read: unknown, or private and not a member → channel_not_found; public, not a member → not_in_channel. */
  #readable(args: Record<string, unknown>): Channel {
    const ch = this.#channelArg(args);
    if (!ch.member) throw new SlackApiError('not_in_channel');
    return ch;
  }

  #channelArg(args: Record<string, unknown>, key = 'channel'): Channel {
    const id = str(args[key]);
    if (id === undefined || id === '') throw new SlackApiError('channel_not_found');
    const ch = this.#channels.get(id) ?? (this.#users.has(id) && id !== this.botUserId ? this.#channels.get(this.imChannel(id)) : undefined);
    if (ch === undefined || (ch.private && !ch.member)) throw new SlackApiError('channel_not_found');
    return ch;
  }

  #channelView(ch: Channel): Record<string, unknown> {
    if (ch.im) {
      return { id: ch.id, created: ch.created, is_im: true, is_org_shared: false, user: ch.imUser, is_user_deleted: false, priority: 0 };
    }
    return {
      id: ch.id,
      name: ch.name,
      name_normalized: ch.name,
      created: ch.created,
      creator: 'UFAKECREATOR',
      is_channel: true,
      is_group: ch.private && ch.id.startsWith('G'),
      is_im: false,
      is_mpim: false,
      is_private: ch.private,
      is_archived: ch.archived,
      is_general: false,
      is_shared: false,
      is_ext_shared: false,
      is_org_shared: false,
      is_pending_ext_shared: false,
      is_member: ch.member,
      is_read_only: ch.readOnly,
      topic: { value: '', creator: '', last_set: 0 },
      purpose: { value: '', creator: '', last_set: 0 },
    };
  }

  #conversationsList(args: Record<string, unknown>): Record<string, unknown> {
    const types = new Set((str(args.types) ?? 'public_channel').split(',').map((t) => t.trim()));
    const excludeArchived = bool(args.exclude_archived);
    const all = [...this.#channels.values()].filter((ch) => {
      if (excludeArchived && ch.archived) return false;
      if (ch.im) return types.has('im');
      if (ch.private) return types.has('private_channel') && ch.member;
      return types.has('public_channel');
    });
    const { page, nextCursor } = this.#page(all, args, 100, (ch) => ch.id);
    return { channels: page.map((ch) => this.#channelView(ch)), response_metadata: { next_cursor: nextCursor } };
  }

  #conversationsInfo(args: Record<string, unknown>): Record<string, unknown> {
    return { channel: this.#channelView(this.#channelArg(args)) };
  }

  #conversationsHistory(args: Record<string, unknown>): Record<string, unknown> {
    const ch = this.#readable(args);
    const oldest = str(args.oldest) ?? '0';
    const latest = str(args.latest);
    const inclusive = bool(args.inclusive);
    const withMetadata = bool(args.include_all_metadata);
    const newestFirst = this.#messages
      .filter((m) => m.channel === ch.id && isTopLevel(m))
      .filter((m) => inRange(m.ts, oldest, latest, inclusive))
      .reverse();
    const { page, nextCursor } = this.#page(newestFirst, args, 100, (m) => m.ts);
    return {
      messages: page.map((m) => this.#view(m, withMetadata)),
      has_more: nextCursor !== '',
      pin_count: 0,
      channel_actions_ts: null,
      channel_actions_count: 0,
      response_metadata: { next_cursor: nextCursor },
    };
  }

  #conversationsReplies(args: Record<string, unknown>): Record<string, unknown> {
    const ch = this.#readable(args);
    const ts = str(args.ts);
    const asked = ts === undefined ? undefined : this.#find(ch.id, ts);
    if (asked === undefined) throw new SlackApiError('thread_not_found');
    const root = this.#find(ch.id, asked.threadTs ?? asked.ts)!;
    const withMetadata = bool(args.include_all_metadata);
    const replies = this.#messages
      .filter((m) => m.channel === ch.id && m.threadTs === root.ts)
      .filter((m) => inRange(m.ts, str(args.oldest) ?? '0', str(args.latest), bool(args.inclusive)));
    // Each page carries the parent first; `limit` counts it.
    const { page, nextCursor } = this.#page(replies, args, 1000, (m) => m.ts, 1);
    return {
      messages: [root, ...page].map((m) => this.#view(m, withMetadata)),
      has_more: nextCursor !== '',
      response_metadata: { next_cursor: nextCursor },
    };
  }

  /** Real cursor pagination: the cursor names the key of the next item to return. */
  #page<T>(items: T[], args: Record<string, unknown>, defaultLimit: number, key: (t: T) => string, reserved = 0): { page: T[]; nextCursor: string } {
    const asked = num(args.limit);
    const limit = Math.max(1, Math.min(asked !== undefined && asked > 0 ? asked : defaultLimit, this.#maxPageSize) - reserved);
    let start = 0;
    const cursor = str(args.cursor);
    if (cursor !== undefined && cursor !== '') {
      const decoded = Buffer.from(cursor, 'base64').toString('utf8');
      if (!decoded.startsWith('next:')) throw new SlackApiError('invalid_cursor');
      start = items.findIndex((t) => key(t) === decoded.slice('next:'.length));
      if (start < 0) throw new SlackApiError('invalid_cursor');
    }
    const page = items.slice(start, start + limit);
    const next = items[start + limit];
    return { page, nextCursor: next === undefined ? '' : Buffer.from(`next:${key(next)}`).toString('base64') };
  }

  #writable(args: Record<string, unknown>): Channel {
    const ch = this.#channelArg(args);
    if (ch.archived) throw new SlackApiError('is_archived');
    if (!ch.member) throw new SlackApiError('not_in_channel');
    if (ch.readOnly) throw new SlackApiError('restricted_action_read_only_channel');
    return ch;
  }

  #postMessage(args: Record<string, unknown>): Record<string, unknown> {
    const ch = this.#writable(args);
    const text = str(args.text) ?? '';
    const blocks = checkBlocks(args.blocks);
    if (text === '' && blocks === undefined && args.attachments === undefined) throw new SlackApiError('no_text');
    if (text.length > LIMITS.text) throw new SlackApiError('msg_too_long');
    const metadata = checkMetadata(args.metadata);
    let threadTs: string | undefined;
    const askedThread = str(args.thread_ts);
    if (askedThread !== undefined && askedThread !== '') {
      const parent = this.#find(ch.id, askedThread);
      if (parent === undefined) throw new SlackApiError('thread_not_found');
      threadTs = parent.threadTs ?? parent.ts;
    }
    const message: StoredMessage = {
      ts: this.#nextTs(),
      channel: ch.id,
      user: this.botUserId,
      botId: this.botId,
      appId: this.appId,
      text,
      ...(blocks !== undefined ? { blocks } : {}),
      ...(metadata !== undefined ? { metadata } : {}),
      ...(threadTs !== undefined ? { threadTs } : {}),
      ...(threadTs !== undefined && bool(args.reply_broadcast) ? { subtype: 'thread_broadcast' } : {}),
    };
    this.#messages.push(message);
    this.#echoEvent(this.#messageEvent(message, ch));
    return { channel: ch.id, ts: message.ts, message: this.#view(message, true) };
  }

  #postEphemeral(args: Record<string, unknown>): Record<string, unknown> {
    const ch = this.#writable(args);
    const user = str(args.user);
    if (user === undefined || !this.#users.has(user)) throw new SlackApiError('user_not_found');
    const text = str(args.text) ?? '';
    const blocks = checkBlocks(args.blocks);
    if (text === '' && blocks === undefined) throw new SlackApiError('no_text');
    if (text.length > LIMITS.text) throw new SlackApiError('msg_too_long');
    const messageTs = this.#nextTs();
    const threadTs = str(args.thread_ts);
    this.ephemerals.push({
      channel: ch.id,
      user,
      text,
      message_ts: messageTs,
      ...(threadTs !== undefined && threadTs !== '' ? { thread_ts: threadTs } : {}),
      ...(blocks !== undefined ? { blocks } : {}),
    });
    return { message_ts: messageTs };
  }

  #update(args: Record<string, unknown>): Record<string, unknown> {
    const ch = this.#channelArg(args);
    if (ch.archived) throw new SlackApiError('is_archived');
    const ts = str(args.ts);
    const message = ts === undefined ? undefined : this.#find(ch.id, ts);
    if (message === undefined) throw new SlackApiError('message_not_found');
    if (message.botId !== this.botId) throw new SlackApiError('cant_update_message');
    const text = str(args.text);
    const blocks = checkBlocks(args.blocks);
    if (text !== undefined && text.length > LIMITS.text) throw new SlackApiError('msg_too_long');
    const metadata = checkMetadata(args.metadata);
    const previous = this.#view(message, false);
    if (text !== undefined) message.text = text;
    if (blocks !== undefined) {
      if (blocks.length === 0) delete message.blocks;
      else message.blocks = blocks;
    }
    if (metadata !== undefined) message.metadata = metadata;
    message.edited = { user: this.botUserId, ts: this.#nextTs() };
    const view = this.#view(message, true);
    this.#echoEvent({
      type: 'message',
      subtype: 'message_changed',
      hidden: true,
      channel: ch.id,
      channel_type: channelType(ch),
      ts: message.edited.ts,
      event_ts: message.edited.ts,
      message: this.#view(message, false),
      previous_message: previous,
    });
    return { channel: ch.id, ts: message.ts, text: message.text, message: view };
  }
}

// ---------------------------------------------------------------- decoding and validation

function decodeArgs(url: URL, contentType: string | undefined, raw: string): Record<string, unknown> {
  const args: Record<string, unknown> = {};
  for (const [k, v] of url.searchParams) args[k] = v;
  if (raw !== '') {
    if ((contentType ?? '').includes('application/json')) {
      try {
        Object.assign(args, JSON.parse(raw) as Record<string, unknown>);
      } catch {
        // Slack answers invalid JSON with an error of its own; nothing is decoded here.
      }
    } else {
      for (const [k, v] of new URLSearchParams(raw)) args[k] = v;
    }
  }
  // Form bodies carry objects as JSON strings: decode the ones Slack reads as objects.
  for (const key of ['blocks', 'metadata', 'attachments']) {
    const value = args[key];
    if (typeof value === 'string' && value !== '') {
      try {
        args[key] = JSON.parse(value);
      } catch {
        // left as the string it is; checkBlocks/checkMetadata refuse it
      }
    }
  }
  return args;
}

function str(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function num(v: unknown): number | undefined {
  const s = str(v);
  if (s === undefined || s === '') return undefined;
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

function bool(v: unknown): boolean {
  return v === true || v === 'true' || v === '1' || v === 1;
}

function inRange(ts: string, oldest: string, latest: string | undefined, inclusive: boolean): boolean {
  const t = Number(ts);
  const lo = Number(oldest);
  if (inclusive ? t < lo : t <= lo) return false;
  if (latest !== undefined && latest !== '') {
    const hi = Number(latest);
    if (inclusive ? t > hi : t >= hi) return false;
  }
  return true;
}

function isTopLevel(m: StoredMessage): boolean {
  return m.threadTs === undefined || m.subtype === 'thread_broadcast';
}

function channelType(ch: Channel): 'im' | 'group' | 'channel' {
  return ch.im ? 'im' : ch.private ? 'group' : 'channel';
}

/** The rich_text block Slack adds to a person's message: text runs and user mentions. */
function richTextBlocks(text: string): unknown[] {
  const elements: unknown[] = [];
  const re = /<@([A-Z0-9]+)>/g;
  let last = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > last) elements.push({ type: 'text', text: text.slice(last, m.index) });
    elements.push({ type: 'user', user_id: m[1] });
    last = m.index + m[0].length;
  }
  if (last < text.length) elements.push({ type: 'text', text: text.slice(last) });
  return [{ type: 'rich_text', block_id: randomBytes(3).toString('base64url'), elements: [{ type: 'rich_text_section', elements }] }];
}

function invalidBlocks(pointer: string, why: string): SlackApiError {
  const message = `[ERROR] ${why} [json-pointer:${pointer}]`;
  return new SlackApiError('invalid_blocks', { errors: [message], response_metadata: { messages: [message] } });
}

function textOf(v: unknown): string | undefined {
  return typeof v === 'object' && v !== null && typeof (v as { text?: unknown }).text === 'string' ? (v as { text: string }).text : undefined;
}

/** Block Kit's limits that the Slack channel can run into; undefined when no blocks were given. */
function checkBlocks(value: unknown): Record<string, unknown>[] | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (!Array.isArray(value)) throw new SlackApiError('invalid_blocks_format');
  if (value.length > LIMITS.blocks) throw invalidBlocks('/blocks', `no more than ${LIMITS.blocks} items allowed`);
  const blockIds = new Set<string>();
  value.forEach((block: unknown, i) => {
    if (typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string') {
      throw invalidBlocks(`/blocks/${i}`, 'missing required field: type');
    }
    const b = block as Record<string, unknown>;
    if (typeof b.block_id === 'string') {
      if (blockIds.has(b.block_id)) throw invalidBlocks(`/blocks/${i}/block_id`, 'duplicate block_id');
      blockIds.add(b.block_id);
    }
    if (b.type === 'section') {
      const text = textOf(b.text);
      if (text !== undefined && text.length > LIMITS.sectionText) {
        throw invalidBlocks(`/blocks/${i}/text`, `must be less than ${LIMITS.sectionText + 1} characters`);
      }
      if (text === undefined && !Array.isArray(b.fields)) throw invalidBlocks(`/blocks/${i}`, 'must provide text or fields');
      if (b.accessory !== undefined) checkElement(b.accessory, `/blocks/${i}/accessory`);
    }
    if (b.type === 'header') {
      const text = textOf(b.text);
      if (text === undefined || text.length > LIMITS.headerText) throw invalidBlocks(`/blocks/${i}/text`, `must be less than ${LIMITS.headerText + 1} characters`);
    }
    if (b.type === 'actions') {
      if (!Array.isArray(b.elements) || b.elements.length === 0) throw invalidBlocks(`/blocks/${i}/elements`, 'must provide elements');
      if (b.elements.length > LIMITS.actionsElements) throw invalidBlocks(`/blocks/${i}/elements`, `no more than ${LIMITS.actionsElements} items allowed`);
      const actionIds = new Set<string>();
      b.elements.forEach((el: unknown, j) => {
        checkElement(el, `/blocks/${i}/elements/${j}`);
        const actionId = (el as { action_id?: unknown }).action_id;
        if (typeof actionId === 'string') {
          if (actionIds.has(actionId)) throw invalidBlocks(`/blocks/${i}/elements/${j}/action_id`, 'duplicate action_id in block');
          actionIds.add(actionId);
        }
      });
    }
  });
  return value as Record<string, unknown>[];
}

function checkElement(el: unknown, pointer: string): void {
  if (typeof el !== 'object' || el === null) throw invalidBlocks(pointer, 'must be an object');
  const e = el as Record<string, unknown>;
  if (e.type === 'button') {
    const text = textOf(e.text);
    if (text === undefined) throw invalidBlocks(`${pointer}/text`, 'missing required field: text');
    if (text.length > LIMITS.buttonText) throw invalidBlocks(`${pointer}/text`, `must be less than ${LIMITS.buttonText + 1} characters`);
    if (typeof e.value === 'string' && e.value.length > 2000) throw invalidBlocks(`${pointer}/value`, 'must be less than 2001 characters');
  }
}

function checkMetadata(value: unknown): { event_type: string; event_payload: Record<string, unknown> } | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const m = value as { event_type?: unknown; event_payload?: unknown };
  if (typeof value !== 'object' || typeof m.event_type !== 'string' || typeof m.event_payload !== 'object' || m.event_payload === null) {
    throw new SlackApiError('invalid_metadata_format');
  }
  return { event_type: m.event_type, event_payload: m.event_payload as Record<string, unknown> };
}

/**
 * A person's text as Slack sends and stores it: `&`, `<` and `>` escaped (Slack's documented escaping), except a
 * user mention (`<@U…>`, `<@U…|name>`), which a client inserts as markup rather than as typed text.
 */
export function slackWire(typed: string): string {
  return typed.split(/(<@[UW][A-Z0-9]+(?:\|[^<>]*)?>)/).map((part, i) => (i % 2 === 1 ? part
    : part.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'))).join('');
}
