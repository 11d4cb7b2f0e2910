import type { WebSocket } from 'ws';
import type { WireEvent } from '../../domain/events.ts';
import type { EventLog } from '../../ports/event-log.ts';

/** Close code for a client whose send buffer is full (contract section 5). */
export const CLOSE_TOO_SLOW = 1013;

/** How many stored events one replay read asks for. */
const REPLAY_PAGE = 500;

/**
 * Delivers one thread's events to one socket, in `seq` order, each once: a replay from the log
 * first, then live events; a live event that skips ahead is preceded by the missing ones read from
 * the log (instances publish independently, so events can arrive out of order or not at all).
 * When the bus may have lost events with none after them (it reconnected), `fill` reads the log.
 * Every step runs on one promise chain, so nothing is reordered.
 */
export class Delivery {
  #chain: Promise<void> = Promise.resolve();
  /** Steps queued on the chain and not done yet; none, and a live event in order is sent at once. */
  #queued = 0;
  #last: number | null;
  /**
   * Without a cursor: the thread's last stored seq when the socket subscribed. Whatever is stored
   * after it was published after the subscription, so a gap is filled from here until one is sent.
   */
  #floor: number | null = null;
  #closed = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly log: EventLog,
    private readonly threadId: string,
    after: number | null,
    private readonly maxBuffered: number,
    /** Event to frame bytes; shared by every socket, so an event is serialized once, not once per socket. */
    private readonly frame: (event: WireEvent) => string | Buffer = JSON.stringify,
    /** Told of a client closed for being too slow, and of stored events read to fill a gap (metrics). */
    private readonly hooks: { readonly slow?: () => void; readonly gap?: (events: number) => void } = {},
  ) {
    this.#last = after;
  }

  /** Sends every stored event after the cursor when the client gave one; else notes where the log ends. */
  replay(): void {
    this.#enqueue(async () => {
      if (this.#last === null) this.#floor = await this.log.lastSeq(this.threadId);
      else await this.#sendStored();
    });
  }

  /** Sends every stored event not sent yet: the bus reconnected, and what it lost meanwhile may be the last. */
  fill(): void {
    this.#enqueue(() => this.#sendStored());
  }

  /** Takes a published event. */
  readonly push = (event: WireEvent): void => {
    const from = this.#last ?? this.#floor;
    // The common case, sent synchronously: nothing waits before it, and it is the next in order (or
    // an old one, which #send drops). A promise step per socket per event cost the fan-out most of
    // its time over a bare broadcast.
    if (this.#queued === 0 && from !== null && event.seq <= from + 1) {
      this.#send(event);
      return;
    }
    this.#enqueue(async () => {
      const from = this.#last ?? this.#floor;
      if (from !== null && event.seq > from + 1) {
        const missing = await this.log.since(this.threadId, from, event.seq - from - 1);
        if (missing.length > 0) this.hooks.gap?.(missing.length);
        for (const stored of missing) this.#send(stored);
      }
      this.#send(event);
    });
  };

  /** Stops sending. */
  close(): void {
    this.#closed = true;
  }

  async #sendStored(): Promise<void> {
    for (;;) {
      const from = this.#last ?? this.#floor;
      if (from === null || this.#closed) return;
      const page = await this.log.since(this.threadId, from, REPLAY_PAGE);
      for (const event of page) this.#send(event);
      if (page.length < REPLAY_PAGE) return;
    }
  }

  #enqueue(step: () => Promise<void>): void {
    this.#queued += 1;
    this.#chain = this.#chain
      .then(step)
      .catch(() => this.ws.close(1011, 'event delivery failed'))
      .finally(() => {
        this.#queued -= 1;
      });
  }

  #send(event: WireEvent): void {
    if (this.#closed || (this.#last !== null && event.seq <= this.#last)) return;
    if (this.ws.bufferedAmount > this.maxBuffered) {
      this.#closed = true;
      this.hooks.slow?.();
      this.ws.close(CLOSE_TOO_SLOW, 'client cannot keep up');
      return;
    }
    this.#last = event.seq;
    // Bytes are sent as a text frame all the same: the frame is JSON.
    this.ws.send(this.frame(event), { binary: false });
  }
}
