import { WebSocketServer } from 'ws';
import type { Duplex } from 'node:stream';
import type { Storage } from '../../ports/storage.ts';
import { originText, type RequestContext } from '../http/context.ts';
import { refuseUpgrade } from '../http/edge.ts';
import { problem } from '../http/reply.ts';
import { parseQuery } from '../http/route.ts';
import { tokenHash, type Authenticate } from '../identity/authenticate.ts';
import { credentialOf } from '../identity/credential.ts';
import { liveTarget, type LiveTarget } from '../../core/reads/live-target.ts';
import { LiveWebSocket } from './live-websocket.ts';
import { LiveQuery } from './schemas.ts';
import type { UserSlots } from './user-slots.ts';

/**
 * The ws server that completes live handshakes: no server of its own, no maximum payload past 4 KiB,
 * no client tracking (the router's own set does). ws answers a handshake RFC 6455 refuses with a
 * text/html 400 of its own: here it is problem+json, as every refusal is. Its message names the
 * header at fault in its own words (never the bytes sent); a version it does not speak is told the
 * one it does.
 */
export function handshakeServer(): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 4096, clientTracking: false, WebSocket: LiveWebSocket });
  wss.on('wsClientError', (error: Error, socket: Duplex) => {
    const version: Record<string, string> = /Sec-WebSocket-Version/.test(error.message) ? { 'sec-websocket-version': '13' } : {};
    refuseUpgrade(socket, problem({ code: 'invalid_websocket_handshake', detail: error.message }, version));
  });
  return wss;
}

/** Options of {@link liveUpgrade}. */
export interface LiveUpgradeOptions {
  readonly wss: WebSocketServer;
  readonly authenticate: Authenticate;
  /** Where the thread a socket names is resolved. */
  readonly storage: Storage;
  readonly slots: UserSlots;
  /** Live sockets one user may hold open on this instance; the next upgrade is refused 429 (default: no cap). */
  readonly maxPerUser?: number;
  /** Takes an accepted socket: its thread's events, or the wait on its key. */
  readonly open: (ws: LiveWebSocket, user: { readonly id: string; readonly credential: string; readonly expiresAt: number }, target: LiveTarget, after: number | null) => void;
}

/**
 * The live socket's upgrade, decided before the handshake is accepted: the `Origin` (403), the
 * credential (401, 429), the query parsed by its schema (422), the user's cap (429), the thread (404).
 * A rejection (storage down, a bug) is the edge's to answer (edge.ts, `upgradeListener`).
 */
export function liveUpgrade(options: LiveUpgradeOptions): (ctx: RequestContext, socket: Duplex, head: Buffer) => Promise<void> {
  const { wss, authenticate, storage, slots } = options;
  return async (ctx, socket, head) => {
    const origin = ctx.req.headers.origin;
    if (origin !== undefined && origin !== originText(ctx.origin)) return refuseUpgrade(socket, problem({ code: 'cross_origin_refused' }));
    const caller = await authenticate(ctx);
    if (!caller.ok) return refuseUpgrade(socket, caller.error);
    const user = caller.value;
    const query = parseQuery(LiveQuery, ctx.query);
    if (!query.ok) return refuseUpgrade(socket, problem(query.error));
    const { thread, after } = query.value;
    if (options.maxPerUser !== undefined && slots.held(user.id) >= options.maxPerUser) {
      return refuseUpgrade(socket, problem({ code: 'too_many_live_sockets' }, { 'retry-after': '1' }));
    }
    // Counted from here, so concurrent upgrades of one user cannot all pass the check.
    const uncount = slots.take(user.id);
    try {
      // Where the socket's events come from: a thread row id now, or a key whose row is not written yet.
      const target = await liveTarget(storage, user.id, thread);
      if (target === 'not_found') {
        uncount();
        return refuseUpgrade(socket, problem({ code: 'thread_unavailable' }));
      }
      const cursor = after ?? null;
      let answered = false;
      wss.handleUpgrade(ctx.req, socket, head, (ws) => {
        // A slot given back below (were ws ever to answer later) is taken again: the socket's `close` gives it back.
        if (answered) slots.retake(user.id);
        answered = true;
        ctx.log.info({ user: user.id }, 'live socket open');
        const expiresAt = user.expires_at === null ? Infinity : Date.parse(user.expires_at);
        options.open(ws as LiveWebSocket, { id: user.id, credential: tokenHash(credentialOf(ctx.req) ?? ''), expiresAt }, target, cursor);
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
  };
}
