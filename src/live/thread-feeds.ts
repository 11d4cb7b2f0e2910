import type { WebSocket } from 'ws';
import type { Logger } from 'pino';
import type { WireEvent } from '../../domain/events.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { EventLog } from '../../ports/event-log.ts';
import { SocketFeed, type SocketFeedSettings } from './socket-feed.ts';

/** Options of {@link threadFeeds}. */
export interface ThreadFeedsOptions {
  readonly bus: EventBus;
  /** Where stored events are read: a replay, a gap. */
  readonly events: EventLog;
  readonly log: Logger;
  /** Bytes a client may have waiting to be sent before it is closed with 1013. */
  readonly maxBuffered: number;
  /** Told of a client closed for being too slow (metrics). */
  readonly slow?: (() => void) | undefined;
  /** Told of stored events read to fill a gap (metrics). */
  readonly gap?: ((events: number) => void) | undefined;
}

/** The threads followed on this instance, each fanned out to its sockets' feeds. */
export interface ThreadFeeds {
  /** Starts feeding a thread's events to a socket: subscribed before replaying, so an event published meanwhile waits behind the replay, never lost. */
  readonly start: (ws: WebSocket, threadId: string, from: number | null) => SocketFeed;
  /** Stops a socket's feed; the thread's bus subscription goes with its last one. */
  readonly stop: (feed: SocketFeed) => void;
  /** Has every feed read what it missed from the log (the bus reconnected: what it sent meanwhile is lost). */
  readonly fillAll: () => void;
  /** Ends every thread's bus subscription. */
  readonly close: () => void;
}

/**
 * One bus subscription per thread followed on this instance, whatever the number of its sockets:
 * the event is handed to each socket's feed in the order they subscribed.
 */
export function threadFeeds(options: ThreadFeedsOptions): ThreadFeeds {
  const { bus, log } = options;
  // The bus hands every subscriber the same event object: its frame is serialized and encoded once
  // (ws would otherwise encode a string again for every socket).
  const frames = new WeakMap<WireEvent, Buffer>();
  const frame = (event: WireEvent): Buffer => {
    let bytes = frames.get(event);
    if (bytes === undefined) frames.set(event, (bytes = Buffer.from(JSON.stringify(event), 'utf8')));
    return bytes;
  };
  /** Held once for every feed of this router. */
  const settings: SocketFeedSettings = { log: options.events, maxBuffered: options.maxBuffered, frame, slow: options.slow, gap: options.gap };

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

  return {
    start: (ws, threadId, from) => {
      const feed = new SocketFeed(ws, threadId, from, settings);
      follow(feed);
      feed.replay();
      return feed;
    },
    stop: (feed) => {
      feed.close();
      unfollow(feed);
    },
    fillAll: () => {
      for (const thread of feeds.values()) for (const feed of thread.feeds) feed.fill();
    },
    close: () => {
      for (const thread of feeds.values()) thread.unsubscribe();
      feeds.clear();
    },
  };
}
