import { join } from 'node:path';
import type { Logger } from 'pino';
import { uuidv7 } from 'uuidv7';
import { parseOrigin } from '../domain/origin.ts';
import { memoryChannelPort } from '../adapters/memory/channel-port.ts';
import type { AgentOffers } from '../ports/agent-offers.ts';
import type { AgentRunner } from '../ports/agent-runner.ts';
import type { ChannelPort } from '../ports/channel-port.ts';
import type { Clock } from '../ports/clock.ts';
import type { EventBus } from '../ports/event-bus.ts';
import type { FetchUiResource } from '../ports/mcp-resource.ts';
import type { Storage } from '../ports/storage.ts';
import { accountSurface } from './account/routes.ts';
import { LINK_CODES_PER_MINUTE, linkRoutes } from './account/link-routes.ts';
import { channelLinking, type WorldLinks } from '../core/channels/links.ts';
import { agentVocabularies } from '../core/agents/vocabularies.ts';
import { artifactSurface, threadArtifactRoute } from './artifacts/routes.ts';
import { artifactLoads } from '../core/artifacts/view.ts';
import { consoleReadRoutes } from './console-api/read-routes.ts';
import { consoleThreadRoutes } from './console-api/thread-routes.ts';
import { consoleReads } from '../core/reads/console-reads.ts';
import { threadEdits } from '../core/threads/thread-edits.ts';
import { pathAccess } from '../core/reads/path-access.ts';
import { consoleSurface } from './console-api/routes.ts';
import { authenticator } from './identity/authenticate.ts';
import { guessLimit } from './identity/guess-limit.ts';
import { sessionRoutes } from './identity/routes.ts';
import { oidcRoutes } from './identity/oidc-routes.ts';
import { tokenRoutes } from './account/token-routes.ts';
import { hookCallRoute, hookRoutes, hookSurface } from './automation/hook-routes.ts';
import { hooksIn } from '../core/automation/hooks.ts';
import { scheduler } from '../core/automation/scheduler.ts';
import { threadOpener } from '../core/runs/open-threads.ts';
import { schedules } from '../core/automation/schedules.ts';
import { cronerReader } from '../adapters/croner/cron.ts';
import { scheduleRoutes } from './automation/schedule-routes.ts';
import { webhookRoutes } from './automation/webhook-routes.ts';
import { webhooksOut } from '../core/automation/webhooks.ts';
import { webhookSender } from '../core/automation/webhook-sender.ts';
import { nodeWebhookPost } from '../adapters/node-http/webhook-post.ts';
import type { PostWebhook } from '../ports/webhook-post.ts';
import { adminRoutes } from './admin/routes.ts';
import { adminSurface } from './admin/surface.ts';
import { sessionKeeper } from '../core/accounts/sessions.ts';
import { accessTokens } from '../core/accounts/access-tokens.ts';
import { administration } from '../core/accounts/administration.ts';
import { oidcSignIn } from '../core/accounts/oidc-sign-in.ts';
import type { IdentityProvider } from '../ports/identity-provider.ts';
import { accountSecrets } from './identity/secrets.ts';
import type { Config } from './config.ts';
import { requestListener, upgradeListener, type Mount } from './http/edge.ts';
import { openApiDocument } from './http/openapi.ts';
import { consoleUiSurface } from './console-ui/routes.ts';
import { buildSurface, type Surface } from './http/surface.ts';
import { liveHttpRoute } from './live/http-route.ts';
import { liveSocket } from './live/socket.ts';
import { createMetrics, type MetricSources } from './metrics/metrics.ts';
import { windowLimiter } from './limits/window-limiter.ts';
import { metricsRoute } from './metrics/routes.ts';
import { measuredEmit, measuredFetch } from './metrics/measured.ts';
import { directives, turnStarter } from '../core/runs/directives.ts';
import { deliveryDispatcher } from '../core/moves/delivery-dispatch.ts';
import { threadMoves } from '../core/moves/moves.ts';
import { threadForks } from '../core/forks/forks.ts';
import { projectDirectories } from './runs/run-directory.ts';
import { gitWorktrees } from '../adapters/git/worktrees.ts';
import { threadDirectories } from '../core/worktrees/run-directory.ts';
import type { Worktrees } from '../ports/worktrees.ts';
import { operationRoutes } from './moves/routes.ts';
import { forkRoutes } from './forks/routes.ts';
import { rewindRoutes } from './rewinds/routes.ts';
import { rewindRestores, threadRewinds } from '../core/rewinds/rewinds.ts';
import { emitter } from '../core/runs/emit.ts';
import { chatChoice, chatInbound, type ChatInbound } from '../core/channels/inbound.ts';
import type { ChatHandlers } from '../ports/chat-inbound.ts';
import { chatProtocol } from '../core/channels/chat-protocol.ts';
import { derivedUuid } from './channels/derived-id.ts';
import { chatRelay } from '../core/channels/relay.ts';
import { backgroundTurns } from '../core/runs/turns.ts';
import { systemClock } from '../core/clock.ts';
import { queuedTurns } from '../core/runs/queue-start.ts';
import { turnCanceller } from '../core/runs/cancel.ts';
import { steerDelivery } from '../core/runs/steer-delivery.ts';
import { sweeper } from '../core/runs/sweeper.ts';
import { backgroundJobs } from './background-jobs.ts';
import { PendingWaiters } from '../core/runs/pending-waiters.ts';
import { answering } from '../core/runs/answers.ts';
import { runRoutes } from './runs/routes.ts';
import { queueRoutes } from './runs/queue-routes.ts';
import { changesRoutes } from './runs/changes-routes.ts';
import { threadChanges } from '../core/worktrees/changes.ts';
import { threadCheckpoints, turnCheckpoints } from '../core/worktrees/checkpoints.ts';
import { checkpointRoutes } from './runs/checkpoint-routes.ts';
import { threadQueue } from '../core/runs/queue.ts';
import { sandboxSurface } from './sandbox/routes.ts';
import { agentsKnown } from './system/agents-known.ts';
import type { SandboxState } from './system/agent-sandbox.ts';
import { systemSurface } from './system/routes.ts';
import { viewerSurface } from './viewer/routes.ts';

/** What the composition root is given: the frozen config, the logger, and what it cannot build itself. */
export interface AppOptions {
  readonly config: Config;
  readonly log: Logger;
  /** The opened storage; the app owns it from here and closes it, as it does the runner and the bus. */
  readonly storage: Storage;
  /** Reads MCP app UI resources from providers. */
  readonly fetchUiResource: FetchUiResource;
  /** Runs agent turns (Agent Client Protocol). */
  readonly runner: AgentRunner;
  /** What each agent offers, learned from the agent (the ACP runner's `offers`). */
  readonly offers: AgentOffers;
  /**
   * Ask every agent connected to a channel what it offers as the app starts, in the background (reads
   * never wait on an agent: without this, the first reads after a start answer without the agents);
   * `/readyz` answers 503 until each has answered or failed. The service does; tests that need no
   * agent leave it off.
   */
  readonly warmOffers?: boolean;
  /** Fans events out to live sockets (in-process, or across instances over PostgreSQL). */
  readonly bus: EventBus;
  /** The channels conversations move to; by default the world file's, in memory. The app closes it (bot connections) when it has a `close`. */
  readonly channels?: ChannelPort & { close?: () => Promise<void> };
  /**
   * The console user a sender's address is linked to on a chat channel, or null; by default the links
   * of the world and of storage (core/channels/links.ts).
   */
  readonly chatLinks?: (channel: string, sender: string) => Promise<string | null>;
  /** The world file's links of its chat channels (an xmpp channel's `links`: user id to address); none by default. */
  readonly worldLinks?: WorldLinks;
  /** The OpenID Connect provider sign-in goes through (built from `config.oidc`); none: tokens only. */
  readonly identityProvider?: IdentityProvider;
  /** Threads' git worktrees; by default the `git` executable's, under `DATA_DIR/worktrees`. */
  readonly worktrees?: Worktrees;
  /** How the delivery outbox is worked (tests shorten it); by default {@link DELIVERY_TIMING}. */
  readonly deliveryTiming?: Partial<typeof DELIVERY_TIMING>;
  /** How long a steer may take to reach the instance running its turn, and its answer after that (default STEER_TIMING). */
  readonly steerTiming?: { readonly acceptMs: number; readonly answerMs: number };
  /** Handlers that answer a path themselves on the console origin (the demo MCP server, in demo mode). */
  readonly mounts?: readonly Mount[];
  /** Log lines dropped so far by the log's stream, for the metrics (src/log-stream.ts). */
  readonly logLinesDropped?: () => number;
  /** The listener's connection counts, for the metrics (server.ts, connectionCounts). */
  readonly connections?: MetricSources['connections'];
  /** How agents are confined, told by `/readyz` (src/system/agent-sandbox.ts); absent, it says nothing of it. */
  readonly agentSandbox?: SandboxState;
  /** What time it is, and when leases, retries and the background jobs come round; by default the host's. */
  readonly clock?: Clock;
  /** How webhook tries are sent; by default node:http and node:https, checked against WEBHOOK_ALLOWED_HOSTS (adapters/node-http). */
  readonly postWebhook?: PostWebhook;
}

/** A built service: the listeners for one `node:http` server, and how to drain it. */
export interface App {
  readonly onRequest: ReturnType<typeof requestListener>;
  readonly onUpgrade: ReturnType<typeof upgradeListener>;
  /** From now on, answers close their connection. */
  readonly drain: () => void;
  /** Releases what the app holds (storage, agent processes, sockets). */
  readonly close: () => Promise<void>;
}

/** The app as composed here: what the server serves, and the entry a chat channel's adapter calls. */
export interface ComposedApp extends App {
  /** Takes a person's message from a chat channel: a directive, an answer, a stop, or a reply to post. */
  readonly receiveChat: ChatInbound;
  /** What a chat channel's adapter is handed once the app is built (`listen` of the xmpp channels, in src/main.ts). */
  readonly chat: ChatHandlers;
}

/** Sign-ins with the identity provider one client may start per minute (this instance): each stores a flow. */
export const SIGN_IN_STARTS_PER_MINUTE = 30;

/** `link <code>` attempts a chat sender may make per minute, per channel (this instance). */
export const LINK_ATTEMPTS_PER_MINUTE = 5;

/** The outbox is looked at every 5 s; a refused delivery is retried after 1 s, doubling up to 5 min; a claim lasts 30 s. */
export const DELIVERY_TIMING: Readonly<{ intervalMs: number; retryMs: number; maxRetryMs: number; claimMs: number }> =
  Object.freeze({ intervalMs: 5_000, retryMs: 1_000, maxRetryMs: 300_000, claimMs: 30_000 });

/** The composition root: every adapter, use case and surface is built here and nowhere else. */
export function createApp(options: AppOptions): ComposedApp {
  const { config, log } = options;
  const { storage } = options;
  const clock = options.clock ?? systemClock;
  const runnerStats = 'stats' in options.runner ? (options.runner as { stats: () => { alive: number; restarts: number } }).stats : undefined;
  // Read when scraped; `waiters` is built below, before any scrape can come.
  const metrics = createMetrics({
    pendingWaits: () => waiters.size, agents: runnerStats, pool: storage.pool, logLinesDropped: options.logLinesDropped, connections: options.connections,
    webhookOutbox: () => storage.webhooks.depth(),
  });
  // One budget of failed credentials per client, shared by every path that looks one up.
  const guesses = guessLimit({
    limiter: windowLimiter({ limit: config.limits.signInsPerMinute }),
    trustProxy: config.trustProxy,
    observe: { failed: metrics.credentialFailed, refused: metrics.guessRefused },
  });
  const authenticate = authenticator(storage.accounts.userByCredential, guesses, clock);
  // Sessions, personal tokens, admins and sign-in with the identity provider (CONTRACT section 13).
  const secrets = accountSecrets();
  // Every instance checks the live sockets of a user whose credentials changed.
  const changed = (user: string) => void options.bus.signal({ kind: 'credentials_changed', user }).catch((error: unknown) => log.warn({ err: error }, 'a change of credentials could not be signalled'));
  const sessions = sessionKeeper({ accounts: storage.accounts, clock, secrets, ttlMs: config.sessionTtlHours * 3_600_000, changed });
  const admin = administration({ accounts: storage.accounts, clock, changed });
  const signIn = options.identityProvider === undefined || config.oidc === null ? null : oidcSignIn({
    accounts: storage.accounts, provider: options.identityProvider, sessions, secrets, clock, newId: uuidv7,
    policy: { allowedDomains: config.oidc.allowedDomains, firstAdmin: config.oidc.firstAdmin },
  });
  // What the agents advertise, narrowed by the catalog: what routes, postures and checks are made of.
  const vocabularies = agentVocabularies(storage.catalog, options.offers);
  // Not ready until every agent's first answer is in (bounded by the offers' time-out).
  const known = options.warmOffers === true ? agentsKnown(vocabularies.warm, log) : () => true;
  const reads = consoleReads(storage, vocabularies, config);
  const loads = artifactLoads({ storage, fetchUiResource: measuredFetch(options.fetchUiResource, metrics), config, log });

  const { runner, bus } = options;
  // What a turn on a chat channel says goes to its place there too (through the delivery outbox).
  // Each event's posts are stored with it, in one write: a crash between them cannot lose or double one.
  const relayed = chatRelay({ storage, newId: uuidv7, poke: () => deliveries.poke() });
  const emit = measuredEmit(emitter(relayed(storage.events), bus), metrics);
  // This instance's id: the holder of the turns it runs, so any other can tell when it stopped.
  const holder = uuidv7();
  const lease = { holder, ms: config.turnLeaseMs };
  const waiters = new PendingWaiters((ids) => storage.writer.pendingAnswers(ids));
  const worktrees = options.worktrees ?? gitWorktrees({ root: join(config.dataDir, 'worktrees') });
  // A rewind's files, put back before anything runs or is read in its worktree (after a crash, too).
  const settle = rewindRestores({ writer: storage.writer, worktrees });
  const runDirectory = threadDirectories({
    catalog: storage.catalog, threads: storage.writer, rows: storage.threads, worktrees, projectDirectory: projectDirectories(config.dataDir), settle, runs: storage.writer,
  });
  // Before a thread's first turn and at every turn's end (here, or swept): its worktree's state, as a commit on the thread's refs.
  const checkpoint = turnCheckpoints({ worktrees, log });
  // A turn's end (here, or swept) starts the thread's next queued directive: run on this instance.
  const startQueued = queuedTurns({ storage, bus, turns: () => turns, runDirectory, log });
  let stopping = false;
  const turns = backgroundTurns({
    writer: storage.writer, runner, emit, waiters, log, holder, leaseMs: config.turnLeaseMs, idleMs: config.agentIdleTimeoutMs, clock, startQueued, stopping: () => stopping, checkpoint,
  });
  // A steer reaches the instance that runs the turn as a cancel does, and is answered (contract section 11).
  const steering = steerDelivery({ bus, clock, newId: uuidv7, log, holder, local: turns.steer, ...(options.steerTiming === undefined ? {} : { timing: options.steerTiming }) });
  const stopWaiting = bus.onSignal((signal) => {
    waiters.onSignal(signal);
    steering.onSignal(signal);
    if (signal.kind === 'cancel_requested') turns.cancel(signal.run_id);
    if (signal.kind === 'reconnected') metrics.busReconnected();
  });
  const sweeps = sweeper({ writer: storage.writer, emit, checkpoint, log, holder, leaseMs: config.turnLeaseMs, clock, runsHere: turns.runs, startQueued });
  const starting = { storage, vocabularies, bus, turns, runDirectory, lease };
  const submit = directives({ ...starting, deliverSteer: steering.deliver });
  // A write whose body is refused answers 404 first when its path names what the caller cannot use.
  const access = pathAccess(storage);
  // Schedules (contract section 12): each due time claimed by one instance and sent as its owner's directive.
  const scheduled = schedules({
    store: storage.schedules, cron: cronerReader, accounts: storage.accounts, catalog: storage.catalog, threadAccess: access.thread,
    open: threadOpener({ ...starting, submit }), clock, newId: uuidv7, derivedId: derivedUuid,
  });
  // Webhooks out (contract section 12): the outbox is filled by the events' own writes; each instance sends what it claims.
  const webhooks = webhooksOut({ store: storage.webhooks, threadAccess: access.thread, clock, newId: uuidv7, allowedHosts: config.webhookAllowedHosts });
  const webhookSending = webhookSender({
    store: storage.webhooks, post: options.postWebhook ?? nodeWebhookPost({ allowedHosts: config.webhookAllowedHosts }), clock, log, holder,
    // Checked at every send: a member removed since, or a deactivated owner, gets nothing more.
    canRead: async (userId, threadId) => (await storage.accounts.account(userId))?.active === true && (await storage.threads.findRow(userId, threadId)) !== null,
    observe: metrics.webhookTry,
  });
  const merged = async (notice: { readonly thread_id: string; readonly commit: string; readonly base: string; readonly strategy: string; readonly by: string }) => {
    const { thread_id, ...data } = notice;
    await storage.webhooks.enqueue({ type: 'merged', thread_id, run_id: null, data, created_at: new Date(clock.now()).toISOString() })
      .then(() => webhookSending.poke(), (error: unknown) => log.warn({ err: error, thread: thread_id }, 'a merge could not be told to webhooks'));
  };
  // The sweep of lapsed turns, the answers' recheck, the worktrees' and the chat claims' clean-ups, the schedules: at start, then each on its period.
  const jobs = backgroundJobs({
    clock, log, sweeps, recheckAnswers: () => waiters.recheck(), catalog: storage.catalog, worktrees,
    retentionMs: config.worktreeRetentionDays * 86_400_000, chatInbox: storage.chatInbox,
    scheduler: scheduler({ store: storage.schedules, cron: cronerReader, send: scheduled.send, clock, log, observeLag: metrics.scheduleLag }),
    webhooks: webhookSending,
  });
  jobs.start();
  const channels = options.channels ?? memoryChannelPort(storage.catalog);
  const deliveries = deliveryDispatcher({
    outbox: storage.outbox, channels, log, holder, clock, landAt: (from, to) => storage.writer.landAt(from, to), ...DELIVERY_TIMING, ...options.deliveryTiming,
  });
  // What an earlier start (or another instance) left in the outbox goes out now.
  deliveries.poke();
  const moves = threadMoves({ ...starting, channels, deliveries, newId: uuidv7 });
  const answers = answering({ storage, bus, runner, vocabularies, emit, log });
  const cancelTurn = turnCanceller({ storage, bus });
  const linking = channelLinking({
    links: storage.links, catalog: storage.catalog, ...(options.worldLinks === undefined ? {} : { worldLinks: options.worldLinks }),
    isActive: async (userId) => (await storage.accounts.account(userId))?.active === true,
  });
  const inbound = { storage, userAt: options.chatLinks ?? linking.userAt, vocabularies, startTurn: turnStarter(starting), cancel: cancelTurn, answer: answers.answer };
  const receiveChat = chatInbound(inbound);
  const linkAttempts = windowLimiter({ limit: LINK_ATTEMPTS_PER_MINUTE });
  // One budget per user for everything that sends an agent a text: directives, edits of queued ones, reviews.
  const directiveBudget = windowLimiter({ limit: config.limits.directivesPerMinute });
  // The chat-inbound protocol the chat channels' adapters call: claim, receive, reply through the outbox, done.
  const chat = chatProtocol({
    receive: receiveChat,
    choose: chatChoice(inbound),
    redeemLinkCode: linking.redeemLinkCode,
    post: async (delivery) => {
      await storage.outbox.add(delivery);
      deliveries.poke();
    },
    inbox: storage.chatInbox,
    userAt: inbound.userAt,
    linkAttempt: (channel, sender) => {
      const key = `${channel}\u0000${sender.toLowerCase()}`;
      if (linkAttempts.blocked(key) !== null) return false;
      linkAttempts.record(key);
      return true;
    },
    newId: uuidv7,
    derivedId: derivedUuid,
  });
  const live = liveSocket({
    storage, bus, authenticate, log, maxPerUser: config.limits.liveSocketsPerUser, stillSignedIn: (credential, user) =>
      storage.accounts.userByCredential(credential, new Date(clock.now()).toISOString()).then((found) => found?.id === user),
    metrics: { opened: metrics.socketOpened, closed: metrics.socketClosed, slow: metrics.slowConsumer, gap: metrics.gapFilled },
  });

  // Hooks in (contract section 12): a directive sent as the hook's owner, by another service with the hook's secret.
  const hooks = hooksIn({ hooks: storage.hooks, accounts: storage.accounts, catalog: storage.catalog, threadAccess: access.thread, submit, clock, secrets, newId: uuidv7 });

  // Users' links to chat addresses; a chat adapter redeems codes and looks senders up through it too.
  const sandbox = buildSurface(sandboxSurface());
  let description: Record<string, unknown> | undefined;
  const surfaces: Surface[] = [
    buildSurface(accountSurface([
      ...sessionRoutes({ userByCredential: storage.accounts.userByCredential, sessions, admin, guesses, clock, signedIn: metrics.signIn }),
      ...oidcRoutes({ signIn, redirectUrl: config.oidc?.redirectUrl ?? null, guesses, starts: windowLimiter({ limit: SIGN_IN_STARTS_PER_MINUTE }), trustProxy: config.trustProxy, signedIn: metrics.signIn }),
      ...tokenRoutes(accessTokens({ accounts: storage.accounts, clock, secrets, newId: uuidv7, changed })),
      ...linkRoutes(linking, windowLimiter({ limit: LINK_CODES_PER_MINUTE })),
    ], authenticate)),
    buildSurface(adminSurface(adminRoutes(admin), authenticate)),
    buildSurface(
      consoleSurface(
        [...consoleReadRoutes(reads), ...consoleThreadRoutes(threadEdits(storage), access), threadArtifactRoute(loads), ...runRoutes(submit, answers, cancelTurn, access, directiveBudget), ...queueRoutes(threadQueue({ storage, bus }), access, directiveBudget), ...changesRoutes(threadChanges({ storage, worktrees, runDirectory, submit, merged }), access, directiveBudget), ...checkpointRoutes(threadCheckpoints({ storage, worktrees, runDirectory })), ...operationRoutes(moves, access), ...forkRoutes(threadForks({ storage, vocabularies, newId: uuidv7, submit }), access, directiveBudget), ...rewindRoutes(threadRewinds({ storage, worktrees, runDirectory, newId: uuidv7, emit }), access), ...hookRoutes(hooks), ...scheduleRoutes(scheduled), ...webhookRoutes(webhooks), liveHttpRoute],
        authenticate,
      ),
    ),
    buildSurface(hookSurface([hookCallRoute(hooks, guesses, directiveBudget)])),
    buildSurface(artifactSurface(config, loads, authenticate)),
    buildSurface(viewerSurface(config)),
    buildSurface(consoleUiSurface(config)),
    // Last: it owns every path the others do not, so its router answers the 404s and 405s.
    buildSurface(
      systemSurface(
        { storage: storage.ready, agentsKnown: known, ...(options.agentSandbox === undefined ? {} : { agentSandbox: options.agentSandbox }) },
        () => (description ??= openApiDocument([...surfaces, sandbox])),
        // No token, no route: /metrics is 404, never public by default.
        config.metricsToken === null ? [] : [metricsRoute(metrics.registry, config.metricsToken, guesses)],
      ),
    ),
  ];

  let draining = false;
  const edge = {
    log,
    sandboxOrigin: dispatchedSandbox(config, log),
    trustProxy: config.trustProxy,
    allowedHosts: config.allowedHosts,
    sandbox,
    surfaces,
    mounts: options.mounts ?? [],
    live,
    draining: () => draining,
    observe: { request: metrics.request, storageUnavailable: metrics.storageUnavailable },
  };
  return {
    onRequest: requestListener(edge),
    onUpgrade: upgradeListener(edge),
    receiveChat,
    chat,
    drain: () => {
      draining = true;
      // Upgraded sockets would hold the listener open: they close with 1001 as the drain begins.
      void live.close();
    },
    close: async () => {
      await live.close();
      await jobs.stop();
      await deliveries.close();
      await options.channels?.close?.();
      // Stopping the agents ends their turns: each turn records its run_error and reflex_asleep, then drains;
      // what is queued behind them waits for the next start (or another instance's sweep).
      stopping = true;
      await runner.close();
      await turns.drain();
      stopWaiting();
      await bus.close();
      await storage.close();
    },
  };
}

/**
 * The sandbox origin the dispatch serves. One configured as the console's own (viewer) origin is
 * not served: it would swallow the console; artifact loads answer 503 for it instead.
 */
function dispatchedSandbox(config: Config, log: Logger) {
  if (config.sandboxOrigin === null) return null;
  if (config.sandboxOrigin === config.viewerOrigin) {
    log.warn({ sandboxOrigin: config.sandboxOrigin }, 'the sandbox origin is the console origin: no sandbox is served, artifact loads answer 503');
    return null;
  }
  return parseOrigin(config.sandboxOrigin);
}
