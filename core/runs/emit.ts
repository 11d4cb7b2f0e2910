import type { EventType, WireEvent } from '../../domain/events.ts';
import type { EventBus } from '../../ports/event-bus.ts';
import type { EventLog } from '../../ports/event-log.ts';

/**
 * Stores an event with its `seq`, then publishes it: nothing reaches a socket that a reconnect could not replay.
 * `key` names the event on its thread (EventLog.append): emitted again under it, the first is answered (and
 * published again: a subscriber takes an event by its `seq` once), nothing stored twice.
 */
export type Emit = (threadId: string, type: EventType, data: Readonly<Record<string, unknown>>, key?: string) => Promise<WireEvent>;

/**
 * The keys of the events that end a run (its end, then `reflex_asleep`), wherever it ends (its turn, or a
 * sweeper): a step retried after a write whose outcome was unknown stores each once, and its chat post once.
 */
export const runEndKeys = (runId: string) => ({ end: `run/${runId}/end`, asleep: `run/${runId}/asleep` }) as const;

export function emitter(log: EventLog, bus: EventBus): Emit {
  return async (threadId, type, data, key) => {
    const event = await log.append(threadId, type, data, [], key);
    await bus.publish(event);
    return event;
  };
}
