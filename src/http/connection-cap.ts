import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { clientKey } from '../limits/client-key.ts';

/** Why a connection is refused: past its client's cap (refused at once), or past the listener's (at its request). */
export type CapRefusal = 'client' | 'global';

/**
 * One client's cap unless configured: a quarter of the listener's, so one client never holds every
 * slot (equal to it, one client's flood would leave everyone else 503 again), and at most 64: a
 * browser's six or so connections and its live sockets (LIVE_SOCKETS_PER_USER, 32), with room to
 * spare. One when the listener allows fewer than eight in all: with a single connection there is
 * no share to keep for others.
 */
export const defaultPerClientCap = (max: number): number => Math.min(64, Math.max(1, Math.floor(max / 4)));

/** The caps of one listener. */
export interface CapLimits {
  /** Open connections past which a new one is refused (MAX_CONNECTIONS). */
  readonly max: number;
  /** Open connections of one client (its clientKey) past which its new one is refused; null: not applied (behind a proxy). */
  readonly perClient: number | null;
}

/** A server's count of open connections, and which of them arrived past a cap. */
export interface ConnectionCap {
  /** Why this connection is refused, or null for one that is served. */
  readonly refusal: (socket: Duplex) => CapRefusal | null;
  /** Connections open now, upgraded websockets included (those refused past their client's cap are not). */
  readonly open: () => number;
  /** Connections refused since the start, by cap. */
  readonly refused: () => Readonly<Record<CapRefusal, number>>;
  /** Notes a served connection node handed to the upgrade listener: it no longer tracks it, so a shutdown must reach it here. */
  readonly upgrade: (socket: Duplex) => void;
  /** The connections noted by `upgrade` and not closed yet. */
  readonly upgraded: () => Iterable<Duplex>;
}

/**
 * Counts every accepted connection until it closes, overall and per client: a client is its
 * address as the credential limit counts it (client-key.ts), so an IPv6 client is its /64, which
 * it usually holds whole, and one address does not bring 2^64 budgets.
 *
 * One past its client's cap is refused at once by `onClientRefused` (server.ts answers it and
 * closes it) and counts toward neither cap: a client that floods the listener uses up its own
 * slots, never everyone's. One accepted while `max` others are open is marked and counted: it is
 * not dropped at once (its client would see a bare reset, or a silence); its request is answered
 * 503 with `Connection: close` by the listener, and one that sends nothing is closed by the headers
 * time-out. Upgraded websockets keep their connection and count until they close: each holds a
 * socket and a send buffer just the same. A socket handed back to the server after an upgrade that
 * was not a websocket (plain-upgrade.ts) is the same connection: counted once.
 */
export function capConnections(server: Server, limits: CapLimits, onClientRefused: (socket: Duplex) => void): ConnectionCap {
  let open = 0;
  const refusedCount: Record<CapRefusal, number> = { client: 0, global: 0 };
  const byClient = new Map<string, number>();
  /** Every connection seen, with its client (undefined: not counted by client). */
  const seen = new WeakMap<Duplex, string | undefined>();
  const refusals = new WeakMap<Duplex, CapRefusal>();
  const upgraded = new Set<Duplex>();
  // One function for every connection, reading its socket from `this` and its client from `seen`: a
  // closure per connection would hold a scope of its own as long as the socket is open.
  function closed(this: Duplex): void {
    open -= 1;
    upgraded.delete(this);
    const client = seen.get(this);
    if (client === undefined) return;
    const left = byClient.get(client)! - 1;
    // Emptied entries go: the map holds the clients connected now, never every client seen.
    if (left === 0) byClient.delete(client);
    else byClient.set(client, left);
  }
  server.on('connection', (socket: Duplex) => {
    if (seen.has(socket)) return;
    // A socket already gone has no address: it closes at once, uncounted by client.
    const address = limits.perClient === null ? undefined : (socket as Partial<Socket>).remoteAddress;
    const client = address === undefined ? undefined : clientKey(address);
    seen.set(socket, client);
    if (client !== undefined) {
      const mine = byClient.get(client) ?? 0;
      if (mine >= limits.perClient!) {
        refusedCount.client += 1;
        refusals.set(socket, 'client');
        onClientRefused(socket);
        return;
      }
      byClient.set(client, mine + 1);
    }
    open += 1;
    if (open > limits.max) {
      refusedCount.global += 1;
      refusals.set(socket, 'global');
    }
    // `on`, not `once`: a socket closes once, and a once wrapper would be kept per open connection. The
    // one listener of the listener's own per connection (an upgraded one's is forgotten here too).
    socket.on('close', closed);
  });
  return {
    refusal: (socket) => refusals.get(socket) ?? null,
    open: () => open,
    refused: () => ({ ...refusedCount }),
    // One refused past its client's cap has no `close` listener here (it is answered and closed at once).
    upgrade: (socket) => void (seen.has(socket) && refusals.get(socket) !== 'client' && upgraded.add(socket)),
    upgraded: () => upgraded,
  };
}
