import { WebSocket } from 'ws';
import type { SocketFeed } from './socket-feed.ts';

/**
 * A live socket as the router holds it: ws's own socket with the router's few fields, fixed, on it.
 * What one socket costs is what a bare `ws` server's costs plus these and its {@link SocketFeed}: the
 * router's listeners are shared functions reading `this`, its timers (pings, key lookups) one for
 * all sockets, its bus subscription one per thread, and nothing of the upgrade request is kept.
 */
export class LiveWebSocket extends WebSocket {
  /** Answered the last ping, or opened since. */
  alive = true;
  /** Whose socket it is: the user's slot is given back when it closes. */
  userId = '';
  /** The SHA-256 of the credential it was opened with: checked again when its user's credentials change. */
  credential = '';
  /** When that credential expires (ms since the epoch; Infinity for a world token): the socket closes then. */
  expiresAt = Infinity;
  /** The thread's events on their way to this socket; null while it waits on a key. */
  feed: SocketFeed | null = null;
  /** The console key it waits on, while the key's row is not written yet. */
  waiting: { readonly key: string; readonly after: number | null } | null = null;
}

/** The listener of a socket's `error` (ws then closes it): one function for every socket. */
export function terminate(this: WebSocket): void {
  this.terminate();
}

/** The listener of a socket's `pong`: one function for every socket. */
export function answered(this: WebSocket): void {
  (this as LiveWebSocket).alive = true;
}
