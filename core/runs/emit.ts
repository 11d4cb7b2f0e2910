import type { EventType, WireEvent } from '../../domain/events.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { EventLog } from '../../ports/event-log.ts';

/** Stores an event with its `seq`, then publishes it: nothing reaches a socket that a reconnect could not replay. */
export type Emit = (threadId: string, type: EventType, data: Readonly<Record<string, unknown>>) => Promise<WireEvent>;

export function emitter(log: EventLog, bus: EventBus): Emit {
  return async (threadId, type, data) => {
    const event = await log.append(threadId, type, data);
    await bus.publish(event);
    return event;
  };
}
