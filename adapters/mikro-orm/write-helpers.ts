import type { WireEvent } from '../../domain/events.ts';
import { uuidv7 } from 'uuidv7';
import type { Conversation, Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { NewConversation } from '../../ports/move-writes.ts';
import { CONVERSATION } from './columns.ts';
import type { Statement } from './transaction.ts';

/**
 * A directive's event takes the thread's next seq inside the transaction; an append racing it from
 * another connection may take that seq first, and the key then refuses this transaction as a whole.
 * It is run again, from the start: it wrote nothing.
 */
export async function retriedOnSeqRace<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!isSeqRace(error) || attempt >= SEQ_RACE_ATTEMPTS) throw error;
    }
  }
}

/** How many times a write that lost a seq race is run again before its error is let through. */
export const SEQ_RACE_ATTEMPTS = 20;

/** Two appenders took the same seq of one thread: the loser wrote nothing and may run again. */
export function isSeqRace(error: unknown): boolean {
  return (error as { code?: unknown }).code === '23505' && (error as { constraint?: unknown }).constraint === 'events_pkey';
}

/** Writes a conversation; its address defaults to the thread itself on the thread's channel. */
export async function insertConversation(sql: Statement, thread: Thread, c: NewConversation, id: string = uuidv7()): Promise<Conversation> {
  const [conversation] = await sql<Conversation>(`
    insert into conversations (id, thread_id, agent, model, permission_mode, effort, address, turn_running, created_at)
    values (?, ?, ?, ?, ?, ?, ?::jsonb, false, ?) returning ${CONVERSATION}`,
  [id, thread.id, c.agent, c.model, c.permission_mode, c.effort, JSON.stringify(c.address ?? { channel: thread.channel, id: thread.id }), uuid7Time(id)]);
  return conversation!;
}

/** An event as `EVENT_COLUMNS` reads it: its keys in the order of the columns, whatever order they came in (jsonb sorts them). */
export function inColumnOrder(event: WireEvent): WireEvent {
  return { seq: event.seq, type: event.type, thread_id: event.thread_id, at: event.at, data: event.data };
}
