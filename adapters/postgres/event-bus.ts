import { randomUUID } from 'node:crypto';
import type { WireEvent } from '../../domain/events.ts';
import type { Id } from '../../domain/model.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { EventLog } from '../../ports/event-log.ts';
import { ConnectionDownError, MAX_PAYLOAD_BYTES, NotifyInterruptedError, openNotifyConnection, type NotifyConnectionOptions } from './notify-connection.ts';
import { chunkSignal, SignalAssembler, type SignalChunk } from './signal-chunks.ts';

/** The channel events are announced on, and the one signals travel on. */
export const EVENTS_CHANNEL = 'console_events';
export const SIGNALS_CHANNEL = 'console_signals';

/** Where the bus listens, and where it reads events too large to travel in a notification. */
export interface PostgresEventBusOptions {
  /** A PostgreSQL URL (a real server: LISTEN/NOTIFY does not cross the embedded socket's connections). */
  readonly url: string;
  readonly events: EventLog;
  /**
   * This instance's own fan-out (the in-process bus, adapters/memory/event-bus.ts, handed over by the
   * composition root: no adapter imports another): its subscribers get this instance's events at
   * publish and the other instances' as they arrive, and a listener that throws is its to report.
   * The bus owns it from here, and closes it.
   */
  readonly local: EventBus;
  /** A dropped connection, a NOTIFY that failed, an announcement that could not be read: reported, never thrown. */
  readonly onError?: (error: unknown) => void;
  /** The connection is back after a drop: notifications meanwhile were missed (fill gaps from the EventLog). */
  readonly onReconnect?: () => void;
  readonly backoff?: { readonly minMs: number; readonly maxMs: number };
  /** The connection's time-outs (connect, each query, idle check); a time-out is a drop. */
  readonly timeouts?: NotifyConnectionOptions['timeouts'];
}

/**
 * Announcements not sent because the connection was down, kept (in order) until it is back: the
 * other instances would otherwise never learn of them. Past this many the oldest are dropped.
 */
const MAX_BACKLOG = 10_000;

/** An event announcement: the event itself when it fits, else its address in the EventLog. */
type EventNote = { o: string; e: WireEvent } | { o: string; t: Id; s: number };

/**
 * The EventBus across instances, over LISTEN/NOTIFY on one dedicated connection. This instance's
 * own subscribers get its events directly, at publish, and its own notifications are skipped when
 * they come back: exactly once, and even while the connection is down. Events from other instances
 * are delivered per thread in the order they were announced, including those read back from the
 * EventLog. What this instance announces while its connection is down is sent once it is back
 * (events by address: the EventLog has them), in the order announced. An event announcement whose
 * NOTIFY was cut mid-send (the connection dropped or timed out before the database answered) may
 * or may not have gone out: it is sent again, by address, once the connection is back, so events
 * cross instances at least once (a receiver's Delivery skips a `seq` it has sent). Signals stay at
 * most once: a signal has no `seq`, so a receiver could not tell a repeat from a new one, and the
 * waiters that matter most check storage without it (pending answers every few seconds).
 * What others announced while this instance's LISTEN was down is lost to it, so once LISTEN is back
 * this instance's `onSignal` listeners get `{ kind: 'reconnected' }`.
 */
export async function createPostgresEventBus(options: PostgresEventBusOptions): Promise<EventBus> {
  const origin = randomUUID();
  const report = options.onError ?? (() => {});
  // Local fan-out is the in-process bus; this adds the other instances. Counted per thread, so an
  // announcement nobody here listens to is dropped before anything is read for it.
  const { local } = options;
  const subscribed = new Map<Id, number>();
  const assembler = new SignalAssembler();
  /** Per thread, the delivery of the last announcement still being read from the EventLog. */
  const inFlight = new Map<Id, Promise<void>>();

  const received = (note: EventNote): void => {
    const threadId = 'e' in note ? note.e.thread_id : note.t;
    if (!subscribed.has(threadId)) return; // nobody here listens: nothing to read
    const event: WireEvent | Promise<WireEvent | undefined> = 'e' in note
      ? note.e
      : options.events.since(note.t, note.s - 1, 1).then(([found]) => (found?.seq === note.s ? found : undefined));
    const before = inFlight.get(threadId);
    if (before === undefined && !(event instanceof Promise)) return void local.publish(event);
    // Read at once, delivered after the earlier announcements of the thread: order is kept.
    const delivered: Promise<void> = Promise.all([before, event]).then(([, found]) => {
      if (found !== undefined) void local.publish(found);
    }).catch(report).finally(() => {
      if (inFlight.get(threadId) === delivered) inFlight.delete(threadId);
    });
    inFlight.set(threadId, delivered);
  };

  let closed = false;
  const connection = await openNotifyConnection({
    url: options.url,
    channels: [EVENTS_CHANNEL, SIGNALS_CHANNEL],
    onError: report,
    onReconnect: () => {
      assembler.clear(); // a signal cut by the drop never completes
      void flush();
      options.onReconnect?.();
      // Whatever was sent while LISTEN was down is lost: this instance's waiters check storage again.
      if (!closed) void local.signal({ kind: 'reconnected' });
    },
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
    ...(options.timeouts === undefined ? {} : { timeouts: options.timeouts }),
    onNotification: (channel, payload) => {
      try {
        const note = JSON.parse(payload) as EventNote | SignalChunk;
        if (note.o === origin) return; // our own: delivered locally when sent
        if (channel === EVENTS_CHANNEL) received(note as EventNote);
        else if (channel === SIGNALS_CHANNEL) {
          const signal = assembler.add(note as SignalChunk);
          if (signal !== null) void local.signal(signal);
        }
      } catch (error) {
        report(error);
      }
    },
  });

  /**
   * Unsent announcements in the order they were announced (by `ticket`); sent in order before
   * anything newer. A NOTIFY cut mid-send comes back later than sends announced after it (they
   * fail when the dropped connection ends, or find the backlog non-empty), so each is put back in
   * its place by ticket.
   */
  const backlog: { readonly ticket: number; readonly channel: string; readonly payloads: string[] }[] = [];
  let tickets = 0;
  /** Whether a failed NOTIFY is kept for the next connection: never sent, or an event announcement that may not have been. */
  const kept = (error: unknown, channel: string): boolean =>
    !closed && (error instanceof ConnectionDownError || (error instanceof NotifyInterruptedError && channel === EVENTS_CHANNEL));
  let flushing: Promise<void> | null = null;
  const drain = async (): Promise<void> => {
    const remove = (entry: (typeof backlog)[number]) => {
      const at = backlog.indexOf(entry);
      if (at >= 0) backlog.splice(at, 1);
    };
    let head: (typeof backlog)[number] | undefined;
    try {
      while (backlog.length > 0 && !closed) {
        head = backlog[0]!;
        await connection.notify(head.channel, head.payloads);
        remove(head);
      }
    } catch (error) {
      // Down again: kept for the next reconnect. Any other failure: that one is dropped, as a live send's would be.
      if (head !== undefined && !kept(error, head.channel)) remove(head);
      report(error);
    }
  };
  /** Sends the backlog in order; one drain at a time (a caller during one joins it). */
  const flush = (): Promise<void> => {
    if (flushing === null && backlog.length > 0) {
      flushing = drain().finally(() => {
        flushing = null;
      });
    }
    return flushing ?? Promise.resolve();
  };
  const keep = (ticket: number, channel: string, payloads: string[]): void => {
    let at = backlog.length;
    while (at > 0 && backlog[at - 1]!.ticket > ticket) at--;
    backlog.splice(at, 0, { ticket, channel, payloads });
    if (backlog.length > MAX_BACKLOG) {
      backlog.shift();
      report(new Error('The bus backlog is full: the oldest unsent announcement was dropped'));
    }
  };
  const send = async (channel: string, payloads: string[], deferred: string[] = payloads): Promise<void> => {
    const ticket = ++tickets;
    if (backlog.length > 0) {
      keep(ticket, channel, deferred); // behind the older ones, in order
      return flush();
    }
    try {
      await connection.notify(channel, payloads);
    } catch (error) {
      // Never sent (the connection is down), or an event announcement cut mid-send: sent when the connection is back.
      if (kept(error, channel)) keep(ticket, channel, deferred);
      report(error);
    }
  };

  return {
    async publish(event) {
      if (closed) return;
      const whole = JSON.stringify({ o: origin, e: event } satisfies EventNote);
      const address = JSON.stringify({ o: origin, t: event.thread_id, s: event.seq } satisfies EventNote);
      // The NOTIFY is written to the connection first (pg writes an idle connection's query at once),
      // so the other instances' sockets do not wait behind this instance's own fan-out; kept for later
      // by address only: a backlog of whole events could hold megabytes.
      const sent = send(EVENTS_CHANNEL, [Buffer.byteLength(whole) <= MAX_PAYLOAD_BYTES ? whole : address], [address]);
      // Synchronous: this instance's subscribers have it before publish returns, whatever the NOTIFY's fate.
      void local.publish(event);
      await sent;
    },
    subscribe(threadId, listener) {
      subscribed.set(threadId, (subscribed.get(threadId) ?? 0) + 1);
      const unsubscribe = local.subscribe(threadId, listener);
      let done = false;
      return () => {
        if (done) return;
        done = true;
        unsubscribe();
        const left = (subscribed.get(threadId) ?? 1) - 1; // none left after close()
        if (left <= 0) subscribed.delete(threadId);
        else subscribed.set(threadId, left);
      };
    },
    async signal(signal) {
      if (closed) return;
      void local.signal(signal);
      if (signal.kind === 'reconnected') return; // local only: each instance learns of its own reconnects
      await send(SIGNALS_CHANNEL, chunkSignal(origin, signal).map((chunk) => JSON.stringify(chunk)));
    },
    onSignal: (listener) => local.onSignal(listener),
    async close() {
      closed = true;
      await local.close();
      subscribed.clear();
      await connection.close();
    },
  };
}
