import type { WebSocket } from 'ws';
import type { WireEvent } from '../../domain/events.ts';
import type { EventLog } from '../../ports/event-log.ts';

/** Close code for a client whose send buffer is full (contract section 5). */
export const CLOSE_TOO_SLOW = 1013;

/** How many stored events one replay read asks for. */
const REPLAY_PAGE = 500;

/**
 * How long stored events wait for room in a client's send buffer before the client is taken for one
 * that cannot keep up. Stored events are sent at the pace the client reads them: a thread's whole log
 * may be many times the buffer, and a client replaying it from 0 must be able to catch up.
 */
export const REPLAY_STALL_MS = 30_000;

/** How often a paced send looks at the send buffer again while it waits for room. */
const ROOM_POLL_MS = 10;

/**
 * What every socket feed of one router shares: held once, not once per socket (a field each would cost
 * every open socket its own copy).
 */
export interface SocketFeedSettings {
  readonly log: EventLog;
  /** Bytes a client may have waiting to be sent before it is closed with 1013. */
  readonly maxBuffered: number;
  /** Event to frame bytes; shared by every socket, so an event is serialized once, not once per socket. */
  readonly frame?: (event: WireEvent) => string | Buffer;
  /** Told of a client closed for being too slow (metrics). */
  readonly slow?: (() => void) | undefined;
  /** Told of stored events read to fill a gap (metrics). */
  readonly gap?: ((events: number) => void) | undefined;
  /** How long stored events wait for room in the send buffer ({@link REPLAY_STALL_MS}). */
  readonly stallMs?: number;
}

/**
 * Feeds one thread's events to one socket, in `seq` order, each once: a replay from the log
 * first, then live events; a live event that skips ahead is preceded by the missing ones read from
 * the log (instances publish independently, so events can arrive out of order or not at all).
 * When the bus may have lost events with none after them (it reconnected), `fill` reads the log.
 * Every step runs on one promise chain, so nothing is reordered.
 *
 * One is held per open socket, so it holds little: its fixed fields, the settings shared by the
 * router, and a promise chain only while a step is queued (none while live events arrive in order).
 */
export class SocketFeed {
  /** The last step queued; null when none is (the chain is started afresh, so a settled one is not kept). */
  #chain: Promise<void> | null = null;
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
    readonly threadId: string,
    after: number | null,
    private readonly settings: SocketFeedSettings,
  ) {
    this.#last = after;
  }

  /** Sends every stored event after the cursor when the client gave one; else notes where the log ends. */
  replay(): void {
    this.#enqueue(async () => {
      if (this.#last === null) this.#floor = await this.settings.log.lastSeq(this.threadId);
      else await this.#sendStored();
    });
  }

  /** Sends every stored event not sent yet: the bus reconnected, and what it lost meanwhile may be the last. */
  fill(): void {
    this.#enqueue(() => this.#sendStored());
  }

  /** Takes a published event. */
  push(event: WireEvent): void {
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
        const missing = await this.settings.log.since(this.threadId, from, event.seq - from - 1);
        if (missing.length > 0) this.settings.gap?.(missing.length);
        await this.#sendPaced(missing);
      }
      this.#send(event);
    });
  }

  /** Stops sending. */
  close(): void {
    this.#closed = true;
  }

  /** Closes the client: a step of its feed failed. */
  fail(): void {
    this.#closed = true;
    this.ws.close(1011, 'event delivery failed');
  }

  async #sendStored(): Promise<void> {
    for (;;) {
      const from = this.#last ?? this.#floor;
      if (from === null || this.#closed) return;
      const page = await this.settings.log.since(this.threadId, from, REPLAY_PAGE);
      await this.#sendPaced(page);
      if (page.length < REPLAY_PAGE) return;
    }
  }

  /**
   * Sends stored events, each once there is room for it: while the send buffer is over half full, it
   * waits for the client to read (up to `stallMs`, then the client is closed as too slow). Live events
   * published meanwhile wait behind on the chain. Sent at once, a replay longer than the buffer closed
   * every client that asked for it, however fast it read.
   */
  async #sendPaced(events: readonly WireEvent[]): Promise<void> {
    const roomy = this.settings.maxBuffered / 2;
    for (const event of events) {
      if (this.ws.bufferedAmount > roomy) {
        const deadline = Date.now() + (this.settings.stallMs ?? REPLAY_STALL_MS);
        while (this.ws.bufferedAmount > roomy && !this.#closed) {
          if (Date.now() >= deadline) return this.#tooSlow();
          await new Promise((resolve) => setTimeout(resolve, ROOM_POLL_MS));
        }
      }
      this.#send(event);
    }
  }

  #tooSlow(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.settings.slow?.();
    this.ws.close(CLOSE_TOO_SLOW, 'client cannot keep up');
  }

  #enqueue(step: () => Promise<void>): void {
    this.#queued += 1;
    const chain: Promise<void> = (this.#chain ?? Promise.resolve())
      .then(step)
      .catch(() => this.fail())
      .finally(() => {
        this.#queued -= 1;
        // Nothing queued after this step: the chain is let go of (the next step starts a new one).
        if (this.#chain === chain) this.#chain = null;
      });
    this.#chain = chain;
  }

  #send(event: WireEvent): void {
    if (this.#closed || (this.#last !== null && event.seq <= this.#last)) return;
    if (this.ws.bufferedAmount > this.settings.maxBuffered) return this.#tooSlow();
    this.#last = event.seq;
    // Bytes are sent as a text frame all the same: the frame is JSON.
    this.ws.send((this.settings.frame ?? JSON.stringify)(event), { binary: false });
  }
}
