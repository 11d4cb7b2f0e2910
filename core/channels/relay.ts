import { askText, chatParts } from '../../domain/chat-text.ts';
import type { EventType, WireEvent } from '../../domain/events.ts';
import { CONSOLE_CHANNEL, type Pending } from '../../domain/model.ts';
import type { Logger } from '../../ports/logger.ts';
import type { NewId } from '../../ports/new-id.ts';
import type { Storage } from '../../ports/storage.ts';
import type { Emit } from '../runs/emit.ts';

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

/**
 * Relays a conversation's turn to the chat place it lives at (contract section 9, outbound): each
 * event `emit` stores on a thread whose latest conversation lives on a chat channel, and that the place
 * should hear of (the reply when the turn ends, split to fit; an approval or question with numbered
 * options; an error or a stop), is put in the delivery outbox as a post at that address, and the
 * dispatcher is poked. The event is stored first: a relay that fails loses a post, never an event.
 */
export function chatRelay(deps: {
  readonly storage: Storage;
  readonly newId: NewId;
  /** Pokes the delivery dispatcher: a post goes out at once. */
  readonly poke: () => void;
  readonly log: Logger;
}) {
  const { storage } = deps;

  async function relay(threadId: string, event: WireEvent): Promise<void> {
    const text = chatTextOf(event);
    if (text === null) return;
    const conversation = await storage.conversations.latestByThread(threadId);
    const address = conversation?.address ?? null;
    if (conversation === null || address === null || conversation.moved_to !== null || address.channel === CONSOLE_CHANNEL) return;
    for (const part of chatParts(text)) {
      await storage.outbox.add({ id: deps.newId(), channel: address.channel, place: address.id, new_thread: false, address, title: '', text: part });
    }
    deps.poke();
  }

  return (emit: Emit): Emit => async (threadId, type, data) => {
    const event = await emit(threadId, type, data);
    if (RELAYED.has(type)) {
      await relay(threadId, event).catch((error: unknown) => deps.log.warn({ err: error, thread: threadId }, 'a post to the chat place could not be stored'));
    }
    return event;
  };
}
