import { WebSocketServer, type WebSocket } from 'ws';
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
import { Delivery } from './delivery.ts';
import { liveTarget } from '../../core/reads/live-target.ts';

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
 * The live socket router: authentication and the Origin check in the upgrade handler (before the
 * handshake is accepted), subscription by thread row id or by the caller's console key, replay
 * after `seq`, pings, and a bounded send buffer per client.
 */
export function liveSocket(options: LiveOptions): UpgradeHandler & { readonly close: () => Promise<void> } {
  const { storage, bus, authenticate, log } = options;
  const maxBuffered = options.maxBuffered ?? 1024 * 1024;
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096 });
  const alive = new WeakMap<WebSocket, boolean>();
  /** Open sockets (and upgrades under way) per user, for the per-user cap. */
  const perUser = new Map<string, number>();
  /**
   * Takes one of a user's slots; answers its release, idempotent. Made here, apart from the upgrade's
   * scope: a listener closing over that scope would keep the request and its buffers alive per socket.
   */
  const takeSlot = (userId: string): (() => void) => {
    perUser.set(userId, (perUser.get(userId) ?? 0) + 1);
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      const left = (perUser.get(userId) ?? 1) - 1;
      if (left <= 0) perUser.delete(userId);
      else perUser.set(userId, left);
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
  // A burst of events delivered in one tick (notifications from another instance come several to a
  // read) leaves each socket as one write, not one per event: a socket is corked at its first frame
  // of the tick, and every corked socket uncorked once the tick's deliveries are done (docs/benchmarks.md,
  // two instances). Node counts corks, so ws's own cork around a frame's two parts nests inside.
  const corked = new Set<Duplex>();
  const uncorkAll = (): void => {
    for (const socket of corked) socket.uncork();
    corked.clear();
  };
  const batching = (socket: Duplex) => (): void => {
    if (corked.has(socket)) return;
    if (corked.size === 0) process.nextTick(uncorkAll);
    socket.cork();
    corked.add(socket);
  };
  const pings = setInterval(() => {
    for (const ws of wss.clients) {
      if (alive.get(ws) === false) ws.terminate();
      else {
        alive.set(ws, false);
        ws.ping();
      }
    }
  }, options.pingMs ?? 30_000);
  pings.unref();
  // What the bus sent while it was reconnecting is lost: every socket of this instance reads its gap from the log.
  const deliveries = new Set<Delivery>();
  const stopFilling = bus.onSignal((signal) => {
    if (signal.kind === 'reconnected') for (const delivery of deliveries) delivery.fill();
  });

  /** Where the socket's events come from: a thread row id now, or a key whose row is not written yet. */
  const resolve = (userId: string, ref: string) => liveTarget(storage, userId, ref);

  function attach(ws: WebSocket, socket: Duplex, userId: string, target: { thread: string } | { key: string }, after: number | null): void {
    alive.set(ws, true);
    options.metrics?.opened();
    ws.once('close', () => options.metrics?.closed());
    ws.on('pong', () => alive.set(ws, true));
    ws.on('error', () => ws.terminate());
    const cleanups: (() => void)[] = [];
    ws.on('close', () => cleanups.forEach((cleanup) => cleanup()));
    const start = (threadId: string, from: number | null) => {
      const delivery = new Delivery(ws, storage.events, threadId, from, maxBuffered, frame, { slow: options.metrics?.slow, gap: options.metrics?.gap, sending: batching(socket) });
      // Subscribe before replaying: an event published meanwhile waits behind the replay, never lost.
      deliveries.add(delivery);
      cleanups.push(bus.subscribe(threadId, delivery.push), () => {
        delivery.close();
        deliveries.delete(delivery);
      });
      delivery.replay();
    };
    if ('thread' in target) return start(target.thread, after);
    let waiting = true;
    const begin = (threadId: string): void => {
      if (!waiting) return;
      waiting = false;
      stop();
      start(threadId, after ?? 0);
    };
    // The row may have been written between the lookup and the listener, or its thread_created
    // signal lost (the bus reconnected, or another instance's notification was cut): storage is
    // asked again then, and every few seconds while the socket waits. Only the first lookup's
    // failure closes the socket; a later one waits for the next.
    const lookUp = (fatal = false): void => {
      storage.writer
        .findByKey(userId, target.key)
        .then((row) => {
          if (row !== null) begin(row.id);
        })
        .catch((error: unknown) => {
          if (!waiting) return;
          log.warn({ err: error }, 'live socket key lookup failed');
          if (fatal) ws.close(1011, 'lookup failed');
        });
    };
    const again = setInterval(() => waiting && lookUp(), options.keyRecheckMs ?? 5_000);
    again.unref();
    const stop = bus.onSignal((signal) => {
      if (signal.kind === 'thread_created' && signal.owner === userId && signal.key === target.key) begin(signal.thread_id);
      else if (signal.kind === 'reconnected' && waiting) lookUp();
    });
    cleanups.push(() => {
      waiting = false;
      clearInterval(again);
      stop();
    });
    lookUp(true);
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
      socket.once('close', uncount);
      wss.handleUpgrade(ctx.req, socket, head, (ws) => {
        ctx.log.info({ user: user.id }, 'live socket open');
        ws.once('close', uncount);
        attach(ws, socket, user.id, target, after.length === 1 ? Number(after[0]) : null);
      });
    } catch (error) {
      uncount();
      throw error;
    }
  }

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
      stopFilling();
      for (const ws of wss.clients) ws.close(1001, 'server shutting down');
      // A client that does not answer the close handshake is cut after a grace period.
      const cut = setTimeout(() => wss.clients.forEach((ws) => ws.terminate()), 2_000);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
      clearTimeout(cut);
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
