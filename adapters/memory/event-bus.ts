import type { WireEvent } from '../../domain/events.ts';
import type { Id } from '../../domain/model.ts';
import type { BusSignal, EventBus } from '../../ports/event-bus.ts';

/** How the in-process bus reports a listener that threw (the other listeners are still called). */
export interface MemoryEventBusOptions {
  readonly onListenerError?: (error: unknown) => void;
}

/**
 * The in-process bus (memory and embedded modes: one process, and LISTEN/NOTIFY does not cross the
 * PGlite socket's connections). Listeners are called synchronously inside `publish` and `signal`,
 * in publish order; each runs on its own, so one that throws cannot keep the event from the rest.
 */
export function createMemoryEventBus(options: MemoryEventBusOptions = {}): EventBus {
  const byThread = new Map<Id, Set<(event: WireEvent) => void>>();
  const signalListeners = new Set<(signal: BusSignal) => void>();
  const report = options.onListenerError ?? (() => {});
  let closed = false;

  // A snapshot of the listeners: one that unsubscribes (or subscribes) while called changes the next delivery only.
  const deliver = <T>(listeners: Iterable<(value: T) => void> | undefined, value: T): void => {
    for (const listener of [...(listeners ?? [])]) {
      try {
        listener(value);
      } catch (error) {
        report(error);
      }
    }
  };

  return {
    async publish(event) {
      if (!closed) deliver(byThread.get(event.thread_id), event);
    },

    subscribe(threadId, listener) {
      const listeners = byThread.get(threadId) ?? new Set();
      byThread.set(threadId, listeners);
      // Wrapped, so the same function subscribed twice is two subscriptions, each removed by its own unsubscribe.
      const entry = (event: WireEvent) => listener(event);
      listeners.add(entry);
      return () => {
        listeners.delete(entry);
        if (listeners.size === 0 && byThread.get(threadId) === listeners) byThread.delete(threadId);
      };
    },

    async signal(signal) {
      if (!closed) deliver(signalListeners, signal);
    },

    onSignal(listener) {
      const entry = (signal: BusSignal) => listener(signal);
      signalListeners.add(entry);
      return () => {
        signalListeners.delete(entry);
      };
    },

    async close() {
      closed = true;
      byThread.clear();
      signalListeners.clear();
    },
  };
}
