import type { WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { EventBus } from '../../ports/event-bus.ts';
import type { Storage } from '../../ports/storage.ts';
import type { UpgradeHandler } from '../http/edge.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import type { LiveTarget } from '../../core/reads/live-target.ts';
import { keyWaits } from './key-waits.ts';
import { answered, type LiveWebSocket, terminate } from './live-websocket.ts';
import { threadFeeds } from './thread-feeds.ts';
import { handshakeServer, liveUpgrade } from './upgrade.ts';
import { userSlots } from './user-slots.ts';

/** The live socket's path (contract section 5). */
export const LIVE_PATH = '/api/console/live';

export interface LiveOptions {
  readonly storage: Storage;
  readonly bus: EventBus;
  readonly authenticate: Authenticate;
  readonly log: Logger;
  /** Ping interval; a client that has not answered the previous ping by the next is dropped. */
  readonly pingMs?: number;
  /** Bytes a client may have waiting to be sent before it is closed with 1013. */
  readonly maxBuffered?: number;
  /** How often a socket waiting on a key looks for the key's row, in case its signal was lost. */
  readonly keyRecheckMs?: number;
  /** Live sockets one user may hold open on this instance; the next upgrade is refused 429 (default: no cap). */
  readonly maxPerUser?: number;
  /** Whether a credential (its SHA-256) still names the user: asked when the user's credentials changed. */
  readonly stillSignedIn?: (credential: string, user: string) => Promise<boolean>;
  /** Told of sockets opened and closed, slow clients closed, and gaps filled from the log (metrics). */
  readonly metrics?: {
    readonly opened: () => void;
    readonly closed: () => void;
    readonly slow: () => void;
    readonly gap: (events: number) => void;
  };
}

/**
 * The live socket router: the upgrade (upgrade.ts: the Origin check and authentication before the
 * handshake is accepted, the query, the per-user cap), subscription by thread row id (thread-feeds.ts)
 * or by the caller's console key (key-waits.ts), replay after `seq`, pings, and a bounded send buffer
 * per client (socket-feed.ts).
 */
export function liveSocket(options: LiveOptions): UpgradeHandler & { readonly close: () => Promise<void> } {
  const { storage, bus, log } = options;
  const wss = handshakeServer();
  /** Open sockets. */
  const sockets = new Set<LiveWebSocket>();
  const slots = userSlots();
  const feeds = threadFeeds({
    bus, events: storage.events, log, maxBuffered: options.maxBuffered ?? 1024 * 1024, slow: options.metrics?.slow, gap: options.metrics?.gap,
  });

  // One timer pings every socket: a client that has not answered the previous ping by the next is dropped.
  const pings = setInterval(() => {
    const now = Date.now();
    for (const [user, at] of changedLately) if (now - at >= 60_000) changedLately.delete(user);
    for (const ws of sockets) {
      // A session or token that expired ends its sockets too.
      if (now >= ws.expiresAt) {
        ws.close(1008, 'credential expired');
        continue;
      }
      if (!ws.alive) ws.terminate();
      else {
        ws.alive = false;
        ws.ping();
      }
    }
  }, options.pingMs ?? 30_000);
  pings.unref();

  /** Starts feeding a thread's events to a socket. */
  const start = (ws: LiveWebSocket, threadId: string, from: number | null): void => {
    ws.feed = feeds.start(ws, threadId, from);
  };
  const waits = keyWaits({ findByKey: (userId, key) => storage.writer.findByKey(userId, key), log, recheckMs: options.keyRecheckMs ?? 5_000, found: start });

  // What the bus sent while it was reconnecting is lost: every socket of this instance reads its gap
  // from the log, and every socket waiting on a key looks for its row. A key's row written is a signal.
  const stopSignals = bus.onSignal((signal) => {
    if (signal.kind === 'reconnected') {
      feeds.fillAll();
      waits.lookUpAll();
      // A credentials_changed sent meanwhile may be lost: every socket's credential is checked again.
      for (const user of new Set([...sockets].map((ws) => ws.userId))) recheck(user);
    } else if (signal.kind === 'thread_created') {
      waits.created(signal.owner, signal.key, signal.thread_id);
    } else if (signal.kind === 'credentials_changed') {
      changedLately.set(signal.user, Date.now());
      recheck(signal.user);
    }
  });

  /**
   * A user signed out, had a token revoked or was deactivated: each of their sockets whose credential no
   * longer names them is closed with 1008 (a client signed in another way reconnects with that).
   */
  /**
   * Users whose credentials changed in the last minute: a socket whose upgrade was authenticated before the
   * signal came, and opened after, is checked once open (the signal found no socket of theirs to check).
   */
  const changedLately = new Map<string, number>();
  function recheck(user: string): void {
    const stillSignedIn = options.stillSignedIn;
    if (stillSignedIn === undefined) return;
    for (const ws of sockets) {
      if (ws.userId !== user) continue;
      stillSignedIn(ws.credential, user).then(
        (signedIn) => {
          if (!signedIn) ws.close(1008, 'credential ended');
        },
        (error: unknown) => log.warn({ err: error, user }, 'a live socket\'s credential could not be checked again'),
      );
    }
  }

  /** Resolves the router's close once the last socket is gone. */
  let drained: (() => void) | null = null;
  /** The listener of a socket's `close`: one function for every socket, doing all of its leaving. */
  function closed(this: WebSocket): void {
    const ws = this as LiveWebSocket;
    sockets.delete(ws);
    slots.release(ws.userId);
    options.metrics?.closed();
    if (ws.feed !== null) {
      feeds.stop(ws.feed);
      ws.feed = null;
    }
    if (ws.waiting !== null) waits.stop(ws);
    if (sockets.size === 0) drained?.();
  }

  function open(ws: LiveWebSocket, user: { readonly id: string; readonly credential: string; readonly expiresAt: number }, target: LiveTarget, after: number | null): void {
    const userId = user.id;
    ws.userId = userId;
    ws.credential = user.credential;
    ws.expiresAt = user.expiresAt;
    sockets.add(ws);
    options.metrics?.opened();
    ws.on('close', closed);
    ws.on('pong', answered);
    ws.on('error', terminate);
    if ('thread' in target) start(ws, target.thread, after);
    else waits.wait(ws, target.key, after);
    const changed = changedLately.get(userId);
    if (changed !== undefined) {
      if (Date.now() - changed < 60_000) recheck(userId);
      else changedLately.delete(userId);
    }
  }

  const upgrade = liveUpgrade({
    wss, authenticate: options.authenticate, storage, slots, open, ...(options.maxPerUser === undefined ? {} : { maxPerUser: options.maxPerUser }),
  });

  return {
    owns: (path) => path === LIVE_PATH,
    upgrade,
    close: async () => {
      clearInterval(pings);
      stopSignals();
      // No handshake is accepted from here (ws answers 503).
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      const gone = new Promise<void>((resolve) => (drained = resolve));
      if (sockets.size === 0) drained!();
      for (const ws of sockets) ws.close(1001, 'server shutting down');
      // A client that does not answer the close handshake is cut after a grace period.
      const cut = setTimeout(() => sockets.forEach((ws) => ws.terminate()), 2_000);
      await gone;
      clearTimeout(cut);
      waits.close();
      feeds.close();
    },
  };
}
