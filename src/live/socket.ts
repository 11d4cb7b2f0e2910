import { WebSocket, WebSocketServer } from 'ws';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import type { WireEvent } from '../../domain/events.ts';
import { isStorableText } from '../../domain/text.ts';
import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import { StorageUnavailableError, type Storage } from '../../ports/storage.ts';
import { originText, type RequestContext } from '../http/context.ts';
import { refuseUpgrade, type UpgradeHandler } from '../http/edge.ts';
import { problem } from '../http/reply.ts';
import { route } from '../http/route.ts';
import type { Authenticate } from '../identity/authenticate.ts';
import { SocketFeed, type SocketFeedSettings } from './socket-feed.ts';
import { liveTarget, type LiveTarget } from '../../core/reads/live-target.ts';

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
  /** Told of sockets opened and closed, slow clients closed, and gaps filled from the log (metrics). */
  readonly metrics?: {
    readonly opened: () => void;
    readonly closed: () => void;
    readonly slow: () => void;
    readonly gap: (events: number) => void;
  };
}

const AFTER = /^(0|[1-9][0-9]{0,9})$/;

/**
 * A live socket as the router holds it: ws's own socket with the router's few fields, fixed, on it.
 * What one socket costs is what a bare `ws` server's costs plus these and its {@link SocketFeed}: the
 * router's listeners are shared functions reading `this`, its timers (pings, key lookups) one for
 * all sockets, its bus subscription one per thread, and nothing of the upgrade request is kept.
 */
class LiveWebSocket extends WebSocket {
  /** Answered the last ping, or opened since. */
  alive = true;
  /** Whose socket it is: the user's slot is given back when it closes. */
  userId = '';
  /** The thread's events on their way to this socket; null while it waits on a key. */
  feed: SocketFeed | null = null;
  /** The console key it waits on, while the key's row is not written yet. */
  waiting: { readonly key: string; readonly after: number | null } | null = null;
}

/** The listener of a socket's `error` (ws then closes it): one function for every socket. */
function terminate(this: WebSocket): void {
  this.terminate();
}

/** The listener of a socket's `pong`: one function for every socket. */
function answered(this: WebSocket): void {
  (this as LiveWebSocket).alive = true;
}

/**
 * The live socket router: authentication and the Origin check in the upgrade handler (before the
 * handshake is accepted), subscription by thread row id or by the caller's console key, replay
 * after `seq`, pings, and a bounded send buffer per client.
 */
export function liveSocket(options: LiveOptions): UpgradeHandler & { readonly close: () => Promise<void> } {
  const { storage, bus, authenticate, log } = options;
  // ws tracks no clients here: the router's own set does, with one `close` listener doing all of a socket's leaving.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096, clientTracking: false, WebSocket: LiveWebSocket });
  // ws answers a handshake RFC 6455 refuses with a text/html 400 of its own: here it is problem+json, as every
  // refusal is. Its message names the header at fault in its own words (never the bytes sent); a version it
  // does not speak is told the one it does.
  wss.on('wsClientError', (error: Error, socket: Duplex) => {
    const version: Record<string, string> = /Sec-WebSocket-Version/.test(error.message) ? { 'sec-websocket-version': '13' } : {};
    refuseUpgrade(socket, problem({ code: 'invalid_websocket_handshake', detail: error.message }, version));
  });
  /** Open sockets. */
  const sockets = new Set<LiveWebSocket>();
  /** Open sockets (and upgrades under way) per user, for the per-user cap. */
  const perUser = new Map<string, number>();
  const release = (userId: string): void => {
    const left = (perUser.get(userId) ?? 1) - 1;
    if (left <= 0) perUser.delete(userId);
    else perUser.set(userId, left);
  };
  /**
   * Takes one of a user's slots for an upgrade under way; answers its release, idempotent. Made here,
   * apart from the upgrade's scope: a listener closing over that scope would keep the request alive.
   * Once the socket is open, its `close` listener gives the slot back instead.
   */
  const takeSlot = (userId: string): (() => void) => {
    perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      release(userId);
    };
  };
  // The bus hands every subscriber the same event object: its frame is serialized and encoded once
  // (ws would otherwise encode a string again for every socket).
  const frames = new WeakMap<WireEvent, Buffer>();
  const frame = (event: WireEvent): Buffer => {
    let bytes = frames.get(event);
    if (bytes === undefined) frames.set(event, (bytes = Buffer.from(JSON.stringify(event), 'utf8')));
    return bytes;
  };
  /** Held once for every feed of this router. */
  const settings: SocketFeedSettings = { log: storage.events, maxBuffered: options.maxBuffered ?? 1024 * 1024, frame, slow: options.metrics?.slow, gap: options.metrics?.gap };

  // One timer pings every socket: a client that has not answered the previous ping by the next is dropped.
  const pings = setInterval(() => {
    for (const ws of sockets) {
      if (!ws.alive) ws.terminate();
      else {
        ws.alive = false;
        ws.ping();
      }
    }
  }, options.pingMs ?? 30_000);
  pings.unref();

  /**
   * One bus subscription per thread followed on this instance, whatever the number of its sockets:
   * the event is handed to each socket's feed in the order they subscribed.
   */
  const feeds = new Map<string, { readonly feeds: Set<SocketFeed>; readonly unsubscribe: () => void }>();
  const follow = (feed: SocketFeed): void => {
    const thread = feeds.get(feed.threadId);
    if (thread !== undefined) return void thread.feeds.add(feed);
    const followers = new Set<SocketFeed>([feed]);
    const unsubscribe = bus.subscribe(feed.threadId, (event) => {
      for (const each of followers) {
        // One socket's failure is its own: the others still get the event.
        try {
          each.push(event);
        } catch (error) {
          log.warn({ err: error }, 'live delivery failed');
          each.fail();
        }
      }
    });
    feeds.set(feed.threadId, { feeds: followers, unsubscribe });
  };
  const unfollow = (feed: SocketFeed): void => {
    const thread = feeds.get(feed.threadId);
    if (thread === undefined || !thread.feeds.delete(feed) || thread.feeds.size > 0) return;
    thread.unsubscribe();
    feeds.delete(feed.threadId);
  };

  /** Sockets waiting on a key whose row is not written yet; one timer looks their keys up again while any waits. */
  const waiters = new Set<LiveWebSocket>();
  let recheck: NodeJS.Timeout | null = null;
  const stopWaiting = (ws: LiveWebSocket): void => {
    ws.waiting = null;
    waiters.delete(ws);
    if (waiters.size === 0 && recheck !== null) {
      clearInterval(recheck);
      recheck = null;
    }
  };

  // What the bus sent while it was reconnecting is lost: every socket of this instance reads its gap
  // from the log, and every socket waiting on a key looks for its row. A key's row written is a signal.
  const stopSignals = bus.onSignal((signal) => {
    if (signal.kind === 'reconnected') {
      for (const thread of feeds.values()) for (const feed of thread.feeds) feed.fill();
      for (const ws of waiters) lookUp(ws);
    } else if (signal.kind === 'thread_created') {
      for (const ws of waiters) if (ws.userId === signal.owner && ws.waiting?.key === signal.key) begin(ws, signal.thread_id);
    }
  });

  /** Starts feeding a thread's events to a socket. */
  const start = (ws: LiveWebSocket, threadId: string, from: number | null): void => {
    const feed = new SocketFeed(ws, threadId, from, settings);
    ws.feed = feed;
    // Subscribed before replaying: an event published meanwhile waits behind the replay, never lost.
    follow(feed);
    feed.replay();
  };
  /** A waiting socket's key has its row: from its first event unless the client gave a cursor. */
  const begin = (ws: LiveWebSocket, threadId: string): void => {
    if (ws.waiting === null) return;
    const { after } = ws.waiting;
    stopWaiting(ws);
    start(ws, threadId, after ?? 0);
  };
  /**
   * Looks for a waiting socket's key row. The row may have been written between the upgrade's lookup
   * and the wait, or its thread_created signal lost (the bus reconnected, or another instance's
   * notification was cut): storage is asked again then, and every few seconds while the socket
   * waits. Only the first lookup's failure closes the socket; a later one waits for the next.
   */
  const lookUp = (ws: LiveWebSocket, fatal = false): void => {
    const key = ws.waiting?.key;
    if (key === undefined) return;
    storage.writer
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
  const wait = (ws: LiveWebSocket, key: string, after: number | null): void => {
    ws.waiting = { key, after };
    waiters.add(ws);
    if (recheck === null) {
      recheck = setInterval(() => {
        for (const each of waiters) lookUp(each);
      }, options.keyRecheckMs ?? 5_000);
      recheck.unref();
    }
    lookUp(ws, true);
  };

  /** Resolves the router's close once the last socket is gone. */
  let drained: (() => void) | null = null;
  /** The listener of a socket's `close`: one function for every socket, doing all of its leaving. */
  function closed(this: WebSocket): void {
    const ws = this as LiveWebSocket;
    sockets.delete(ws);
    release(ws.userId);
    options.metrics?.closed();
    if (ws.feed !== null) {
      ws.feed.close();
      unfollow(ws.feed);
      ws.feed = null;
    }
    if (ws.waiting !== null) stopWaiting(ws);
    if (sockets.size === 0) drained?.();
  }

  function open(ws: LiveWebSocket, userId: string, target: LiveTarget, after: number | null): void {
    ws.userId = userId;
    sockets.add(ws);
    options.metrics?.opened();
    ws.on('close', closed);
    ws.on('pong', answered);
    ws.on('error', terminate);
    if ('thread' in target) start(ws, target.thread, after);
    else wait(ws, target.key, after);
  }

  async function upgrade(ctx: RequestContext, socket: Duplex, head: Buffer): Promise<void> {
    const origin = ctx.req.headers.origin;
    if (origin !== undefined && origin !== originText(ctx.origin)) return refuseUpgrade(socket, problem({ code: 'cross_origin_refused' }));
    const caller = await authenticate(ctx);
    if (!caller.ok) return refuseUpgrade(socket, caller.error);
    const user = caller.value;
    const ref = ctx.query.getAll('thread');
    const after = ctx.query.getAll('after');
    const errors = [
      ...(ref.length !== 1 || ref[0] === '' || ref[0]!.length > 200 || /[\u0000-\u001f\u007f]/.test(ref[0]!) || !isStorableText(ref[0]!) ? [{ path: 'query.thread', message: 'must be given once: a thread id or a console key' }] : []),
      ...(after.length > 1 || (after.length === 1 && !AFTER.test(after[0]!)) ? [{ path: 'query.after', message: 'must be a whole number given once' }] : []),
    ];
    if (errors.length > 0) return refuseUpgrade(socket, problem({ code: 'validation_failed', errors }));
    // Ids and keys are UUIDs compared in lower case, as every path id is.
    const value = UUID_PATTERN.test(ref[0]!) ? ref[0]!.toLowerCase() : ref[0]!;
    if (options.maxPerUser !== undefined && (perUser.get(user.id) ?? 0) >= options.maxPerUser) {
      return refuseUpgrade(socket, problem({ code: 'too_many_live_sockets' }, { 'retry-after': '1' }));
    }
    // Counted from here, so concurrent upgrades of one user cannot all pass the check.
    const uncount = takeSlot(user.id);
    try {
      const target = await resolve(user.id, value);
      if (target === 'not_found') {
        uncount();
        return refuseUpgrade(socket, problem({ code: 'thread_unavailable' }));
      }
      const cursor = after.length === 1 ? Number(after[0]) : null;
      let answered = false;
      wss.handleUpgrade(ctx.req, socket, head, (ws) => {
        // A slot given back below (were ws ever to answer later) is taken again: the socket's `close` gives it back.
        if (answered) perUser.set(user.id, (perUser.get(user.id) ?? 0) + 1);
        answered = true;
        ctx.log.info({ user: user.id }, 'live socket open');
        open(ws, user.id, target, cursor);
      });
      // Without `verifyClient`, ws accepts or refuses the handshake before `handleUpgrade` returns: one
      // refused (the socket gone meanwhile, a bad header) gives its slot back here. No listener is left
      // on the socket for it: one would be kept for as long as the socket is open.
      if (!answered) {
        answered = true;
        uncount();
      }
    } catch (error) {
      uncount();
      throw error;
    }
  }

  /** Where the socket's events come from: a thread row id now, or a key whose row is not written yet. */
  const resolve = (userId: string, ref: string) => liveTarget(storage, userId, ref);

  return {
    owns: (path) => path === LIVE_PATH,
    upgrade: (ctx, socket, head) => {
      upgrade(ctx, socket, head).catch((error: unknown) => {
        // Storage down is an outage, answered as every request answers it (503), not a bug.
        if (error instanceof StorageUnavailableError) {
          ctx.log.warn({ err: error.cause ?? error }, 'storage unavailable');
          return refuseUpgrade(socket, problem({ code: 'storage_unavailable' }, { 'retry-after': '5' }));
        }
        log.error({ err: error }, 'live upgrade failed');
        refuseUpgrade(socket, problem({ code: 'internal' }));
      });
    },
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
      for (const waiting of [...waiters]) stopWaiting(waiting);
      for (const thread of feeds.values()) thread.unsubscribe();
      feeds.clear();
    },
  };
}

/** `GET /api/console/live` without an upgrade: 426, so a plain client learns what the path is. */
export const liveHttpRoute = route({
  method: 'GET',
  path: LIVE_PATH,
  summary: "The live socket: upgrade to a websocket (?thread=<row id or key>&after=<seq>) for the thread's wire events",
  operationId: 'liveSocket',
  responses: { 101: 'Switching protocols: from then on each text frame is one LiveEvent (components.schemas.LiveEvent)', 401: 'No valid credential', 403: 'Foreign Origin', 404: 'Thread unavailable', 426: 'Not an upgrade', 429: 'Too many failed credentials from this client, or too many live sockets of the user (Retry-After)' },
  handle: () => problem({ code: 'upgrade_required' }, { upgrade: 'websocket' }),
});
