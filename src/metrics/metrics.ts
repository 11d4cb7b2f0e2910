import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { requestMetrics } from './request-metrics.ts';

/** What the metrics read when scraped, from parts that keep their own counts. */
export interface MetricSources {
  /** Approvals and questions this instance's agents wait on now. */
  readonly pendingWaits: () => number;
  /** Agent processes alive (started or starting) and how many starts replaced an earlier process. */
  readonly agents?: () => { readonly alive: number; readonly restarts: number };
  /** The database pool: connections in use, idle, and requests waiting for one (database modes). */
  readonly pool?: () => { readonly used: number; readonly free: number; readonly pending: number };
  /** Log lines dropped since the process started (the log's reader did not keep up). */
  readonly logLinesDropped?: () => number;
  /** The listener's connections: open now, and refused since the start past a client's cap or the global one. */
  readonly connections?: () => { readonly open: number; readonly refused: Readonly<Record<'client' | 'global', number>> };
  /** The webhooks' outbox: deliveries pending (of every instance: it is the database's), and when the oldest's event was stored. */
  readonly webhookOutbox?: () => Promise<{ readonly pending: number; readonly oldest: string | null }>;
}

/**
 * The service's metrics in the Prometheus format, on a registry of the app's own (never the global
 * one: tests build many apps in one process). Labels are bounded: a route is its pattern
 * (`/api/console/threads/:id`), never a path a client chose.
 */
export interface Metrics {
  readonly registry: Registry;
  /** One answered request. */
  readonly request: (route: string, method: string, status: number, seconds: number) => void;
  readonly socketOpened: () => void;
  readonly socketClosed: () => void;
  /** A live socket closed because its client could not keep up (1013). */
  readonly slowConsumer: () => void;
  /** A run that ended, by its status. */
  readonly runEnded: (status: string, seconds: number | null) => void;
  /** One MCP UI resource fetch, by outcome. */
  readonly mcpFetch: (outcome: 'ok' | 'failed', seconds: number) => void;
  readonly busReconnected: () => void;
  /** Stored events a live socket read from the log to fill a gap the bus left. */
  readonly gapFilled: (events: number) => void;
  /** A request answered 503 because storage did not answer in time (or at all). */
  readonly storageUnavailable: () => void;
  /** A credential (token, cookie, metrics token) that named no one. */
  readonly credentialFailed: () => void;
  /** A credential not even looked up: its client had used up its failures (429). */
  readonly guessRefused: () => void;
  /** A sign-in (`token` or `oidc`) and its outcome: `signed_in`, or the reason it was refused. */
  readonly signIn: (method: 'token' | 'oidc', outcome: string) => void;
  /** One try of a webhook delivery by this instance, by outcome (core/automation/webhook-sender.ts, TryOutcome). */
  readonly webhookTry: (outcome: string) => void;
  /** A scheduled directive stored, `seconds` after its due time. */
  readonly scheduleLag: (seconds: number) => void;
}

/** The request and fetch histograms' buckets, in seconds. */
export const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const RUN_SECONDS = [0.5, 1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600];

export function createMetrics(sources: MetricSources): Metrics {
  const registry = new Registry();
  const requests = requestMetrics(registry, {
    counter: { name: 'console_http_requests_total', help: 'HTTP requests answered, by route pattern, method and status' },
    histogram: { name: 'console_http_request_duration_seconds', help: 'Time to answer an HTTP request, by route pattern and method', buckets: SECONDS },
  });
  const sockets = new Gauge({ name: 'console_live_sockets_open', help: 'Live websockets open on this instance', registers: [registry] });
  const slow = new Counter({ name: 'console_live_slow_consumers_total', help: 'Live websockets closed with 1013: the client could not keep up', registers: [registry] });
  const runs = new Counter({ name: 'console_runs_total', help: 'Runs ended on this instance, by status', labelNames: ['status'], registers: [registry] });
  const runTime = new Histogram({ name: 'console_run_duration_seconds', help: 'How long runs ended on this instance took, by status', labelNames: ['status'], buckets: RUN_SECONDS, registers: [registry] });
  const fetches = new Counter({ name: 'console_mcp_fetches_total', help: 'MCP UI resource fetches, by outcome', labelNames: ['outcome'], registers: [registry] });
  const fetchTime = new Histogram({ name: 'console_mcp_fetch_duration_seconds', help: 'Time of one MCP UI resource fetch (connect, list, read), by outcome', labelNames: ['outcome'], buckets: SECONDS, registers: [registry] });
  const reconnects = new Counter({ name: 'console_bus_reconnects_total', help: 'Times the event bus connection came back after a drop', registers: [registry] });
  const gapEvents = new Counter({ name: 'console_live_gap_fill_events_total', help: 'Stored events live sockets read from the log to fill gaps the bus left', registers: [registry] });
  const unavailable = new Counter({ name: 'console_storage_unavailable_total', help: 'Requests answered 503 because storage did not answer (time-outs included)', registers: [registry] });
  const credentialFailures = new Counter({ name: 'console_credential_failures_total', help: 'Credentials (tokens, session cookies, the metrics token) that named no one', registers: [registry] });
  const signIns = new Counter({ name: 'console_sign_ins_total', help: 'Sign-ins by method (token, oidc) and outcome (signed_in, or the reason refused)', labelNames: ['method', 'outcome'], registers: [registry] });
  const guessesRefused = new Counter({ name: 'console_credential_guesses_refused_total', help: 'Requests answered 429 without looking their credential up: the client had used up its failed credentials', registers: [registry] });
  new Gauge({ name: 'console_pending_waits', help: 'Approvals and questions the agents of this instance wait on', registers: [registry], collect() { this.set(sources.pendingWaits()); } });
  if (sources.agents !== undefined) {
    const agents = sources.agents;
    new Gauge({ name: 'console_agent_processes', help: 'Agent processes alive (or starting) on this instance', registers: [registry], collect() { this.set(agents().alive); } });
    // A counter read from the runner's own count: set as a gauge would be, exposed as what it is.
    new Gauge({ name: 'console_agent_restarts', help: 'Agent process starts that replaced an earlier process of the same agent (a counter)', registers: [registry], collect() { this.set(agents().restarts); } });
  }
  if (sources.logLinesDropped !== undefined) {
    const read = sources.logLinesDropped;
    let counted = 0;
    new Counter({
      name: 'console_log_lines_dropped_total', help: "Log lines dropped because the log's reader (stdout) did not keep up", registers: [registry],
      // The count is kept by the log stream (it outlives any app): added here as it grew since the last scrape.
      collect() {
        const now = read();
        if (now > counted) this.inc(now - counted);
        counted = now;
      },
    });
  }
  if (sources.pool !== undefined) {
    const pool = sources.pool;
    new Gauge({
      name: 'console_db_pool_connections', help: 'Database pool connections, by state (used, free, pending: requests waiting for one)', labelNames: ['state'], registers: [registry],
      collect() {
        const { used, free, pending } = pool();
        this.set({ state: 'used' }, used);
        this.set({ state: 'free' }, free);
        this.set({ state: 'pending' }, pending);
      },
    });
  }
  const scheduleLag = new Histogram({
    name: 'console_schedule_lag_seconds', help: "Time from a schedule's due time to its directive stored, on the instance that sent it", buckets: SECONDS, registers: [registry],
  });
  const webhookTries = new Counter({
    name: 'console_webhook_deliveries_total', help: 'Webhook delivery tries made by this instance, by outcome (delivered, retrying, failed, dropped, disabled)', labelNames: ['outcome'], registers: [registry],
  });
  if (sources.webhookOutbox !== undefined) {
    const outbox = sources.webhookOutbox;
    // One read of the outbox per scrape, shared by the two gauges.
    let reading: Promise<{ readonly pending: number; readonly oldest: string | null } | null> | null = null;
    const read = () => (reading ??= outbox().catch(() => null).finally(() => setTimeout(() => { reading = null; }, 0)));
    new Gauge({
      name: 'console_webhook_outbox_depth', help: 'Webhook deliveries waiting to be sent (or sent again), all instances', registers: [registry],
      async collect() {
        const state = await read();
        if (state !== null) this.set(state.pending);
      },
    });
    new Gauge({
      name: 'console_webhook_outbox_oldest_age_seconds', help: 'Age of the oldest event whose webhook delivery still waits (0: none waits)', registers: [registry],
      async collect() {
        const state = await read();
        if (state !== null) this.set(state.oldest === null ? 0 : Math.max(0, (Date.now() - Date.parse(state.oldest)) / 1000));
      },
    });
  }
  if (sources.connections !== undefined) {
    const connections = sources.connections;
    new Gauge({ name: 'console_connections_open', help: 'Connections open on the listener (upgraded websockets included)', registers: [registry], collect() { this.set(connections().open); } });
    // A counter read from the listener's own count, as the agent restarts are.
    new Gauge({
      name: 'console_connections_refused', help: 'Connections refused since the start (a counter), by cap: client (MAX_CONNECTIONS_PER_CLIENT, 429) or global (MAX_CONNECTIONS, 503)', labelNames: ['cap'], registers: [registry],
      collect() {
        const { refused } = connections();
        this.set({ cap: 'client' }, refused.client);
        this.set({ cap: 'global' }, refused.global);
      },
    });
  }
  return {
    registry,
    request: requests.request,
    socketOpened: () => sockets.inc(),
    socketClosed: () => sockets.dec(),
    slowConsumer: () => slow.inc(),
    runEnded: (status, seconds) => {
      runs.inc({ status });
      if (seconds !== null && seconds >= 0) runTime.observe({ status }, seconds);
    },
    mcpFetch: (outcome, seconds) => {
      fetches.inc({ outcome });
      fetchTime.observe({ outcome }, seconds);
    },
    busReconnected: () => reconnects.inc(),
    gapFilled: (events) => gapEvents.inc(events),
    storageUnavailable: () => unavailable.inc(),
    credentialFailed: () => credentialFailures.inc(),
    guessRefused: () => guessesRefused.inc(),
    signIn: (method, outcome) => signIns.inc({ method, outcome }),
    webhookTry: (outcome) => webhookTries.inc({ outcome }),
    scheduleLag: (seconds) => scheduleLag.observe(seconds),
  };
}
