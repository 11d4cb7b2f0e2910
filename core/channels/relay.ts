import { askText, chatParts } from '../../domain/chat-text.ts';
import type { EventType, WireEvent } from '../../domain/events.ts';
import { CONSOLE_CHANNEL, type Pending } from '../../domain/model.ts';
import type { Delivery, DeliveryAsk } from '../../ports/delivery-outbox.ts';
import type { EventLog } from '../../ports/event-log.ts';
import type { NewId } from '../../ports/new-id.ts';
import type { Storage } from '../../ports/storage.ts';

/** The events a chat place hears of: the turn's reply, what it asks, and how it ended when not well. */
const RELAYED: ReadonlySet<EventType> = new Set(['message', 'approval_requested', 'question_asked', 'run_error', 'run_cancelled']);

/** What a chat place is told of one stored event, or null: nothing (a delta, a person's own message, a tool call). */
export function chatTextOf(event: Pick<WireEvent, 'type' | 'data'>): string | null {
  const data = event.data as Record<string, unknown>;
  switch (event.type) {
    case 'message': {
      const message = data['message'] as { role?: unknown; text?: unknown } | undefined;
      return message?.role === 'assistant' && typeof message.text === 'string' && message.text !== '' ? message.text : null;
    }
    case 'approval_requested':
    case 'question_asked': {
      const pending = data['pending'] as Pending | undefined;
      return pending === undefined ? null : askText(pending);
    }
    case 'run_error':
      return `The turn failed: ${typeof data['error'] === 'string' ? data['error'] : 'unknown error'}`;
    case 'run_cancelled':
      return 'The turn was stopped.';
    default:
      return null;
  }
}

/** The ask an approval or a question carries to a platform with buttons, or null: the event asks nothing. */
export function chatAskOf(event: Pick<WireEvent, 'type' | 'data'>): DeliveryAsk | null {
  if (event.type !== 'approval_requested' && event.type !== 'question_asked') return null;
  const pending = (event.data as Record<string, unknown>)['pending'] as Pending | undefined;
  if (pending === undefined) return null;
  return { pending_id: pending.id, kind: pending.kind, title: pending.title, options: pending.options.map(({ id, name }) => ({ id, name })) };
}

/**
 * Relays a conversation's turn to the chat place it lives at (contract section 9, outbound): each
 * event stored on a thread whose latest conversation lives on a chat channel, and that the place
 * should hear of (the reply when the turn ends, split to fit; an approval or question with numbered
 * options, its `ask` on the last part for a platform with buttons; an error or a stop), is stored with
 * its posts at that address in the delivery outbox, in the event's own write (EventLog.append): a crash
 * right after the event loses no post, and an event that failed to store posts nothing. The dispatcher is poked once it is written. The log answered
 * wraps `log`: the emitter stores every event through it.
 */
export function chatRelay(deps: {
  readonly storage: Pick<Storage, 'conversations'>;
  readonly newId: NewId;
  /** Pokes the delivery dispatcher: a post goes out at once. */
  readonly poke: () => void;
}) {
  /** The posts `event` makes at the chat place the thread's conversation lives at: none for the console, or a conversation that moved away. */
  async function postsOf(threadId: string, event: Pick<WireEvent, 'type' | 'data'>): Promise<Delivery[]> {
    if (!RELAYED.has(event.type)) return [];
    const text = chatTextOf(event);
    if (text === null) return [];
    const conversation = await deps.storage.conversations.latestByThread(threadId);
    const address = conversation?.address ?? null;
    if (conversation === null || address === null || conversation.moved_to !== null || address.channel === CONSOLE_CHANNEL) return [];
    const ask = chatAskOf(event);
    const parts = chatParts(text);
    // Ids taken in order (UUIDv7): the outbox hands the parts over oldest first. The buttons go under the
    // last part, after the options' words.
    return parts.map((part, index) => ({
      id: deps.newId(), channel: address.channel, place: address.id, new_thread: false, address, title: '', text: part,
      ask: index === parts.length - 1 ? ask : null,
    }));
  }

  return (log: EventLog): EventLog => ({
    ...log,
    async append(threadId, type, data, posts = [], key) {
      const own = await postsOf(threadId, { type, data });
      const event = await log.append(threadId, type, data, [...posts, ...own], key);
      if (own.length > 0) deps.poke();
      return event;
    },
  });
}
