import { uuidv7 } from 'uuidv7';
import type { Address, Conversation, DirectiveOrigin, Message, Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { MemoryState } from './state.ts';

// Atomicity in memory: every write checks and writes without an `await` in between, so no other
// call can interleave with it on the one JavaScript thread. These helpers never await.

/** The thread by id; a missing one is a bug of the caller (the database's foreign key would refuse it). */
export function requireThread(state: MemoryState, threadId: string): Thread {
  const thread = state.threads.get(threadId);
  if (thread === undefined) throw new Error(`No thread ${threadId}`);
  return thread;
}

/** The thread's newest conversation: the one a directive or a move must still find the latest. */
export const latestConversation = (state: MemoryState, threadId: string): Conversation | undefined =>
  [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort((a, b) => (a.id < b.id ? 1 : -1))[0];

/** Writes a conversation; its address defaults to the thread itself on the thread's channel. */
export function newConversation(
  state: MemoryState,
  threadId: string,
  fields: { agent: string; model: string | null; permission_mode: string | null; effort: string | null; address?: Address | null; id?: string },
): Conversation {
  const { address, id = uuidv7(), ...rest } = fields;
  const thread = requireThread(state, threadId);
  const conversation: Conversation = {
    id, thread_id: threadId, ...rest, address: address ?? { channel: thread.channel, id: threadId }, turn_running: false, created_at: uuid7Time(id), moved_to: null,
  };
  state.conversations.set(id, conversation);
  return conversation;
}

/** Appends a message to a thread's ledger. */
export function appendLedgerMessage(
  state: MemoryState, threadId: string, fields: { role: string; text: string; artifact_id: string | null; origin?: DirectiveOrigin | null }, id: string = uuidv7(),
): Message {
  requireThread(state, threadId);
  const message: Message = { id, role: fields.role, text: fields.text, artifact_id: fields.artifact_id, created_at: uuid7Time(id), origin: fields.origin ?? null };
  state.messages.set(id, { ...message, thread_id: threadId });
  return message;
}
