import type { Failure } from '../../domain/errors.ts';
import type { Agent, Channel, Conversation, Thread, User } from '../../domain/model.ts';
import type { OfferedAgent } from '../../domain/vocabulary.ts';
import type { OperationsInput } from '../../domain/moves.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { ChannelPort } from '../../ports/channel-port.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { QueueEdits } from '../../ports/queue-edits.ts';
import { offeredOnly, type AgentVocabularies, type KnownAgent } from '../agents/vocabularies.ts';

/** What the operation rules look at for one thread, read for one caller. */
export interface MoveContext {
  readonly thread: Thread;
  /** The conversation that would move: the thread's latest. */
  readonly conversation: Conversation | null;
  readonly channels: readonly Channel[];
  /** The agents of the channels and the conversation's own, as the catalog has them (what a turn runs). */
  readonly agents: readonly Agent[];
  /** The agents whose offer is known, with the vocabularies they advertise: what routes are made of. */
  readonly offered: readonly OfferedAgent[];
  /** What is known of every agent (why one is unavailable). */
  readonly known: readonly KnownAgent[];
  readonly input: OperationsInput;
}

/**
 * Reads a thread the caller can access (404 otherwise) with its conversations, pending items and the
 * channels. What the agents offer is what is known now; `wait` names the agents a move must check
 * (given the conversation that would move): those are waited for, bounded, while nothing is known of them.
 */
export async function moveContext(
  storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: QueueEdits },
  channelPort: ChannelPort,
  vocabularies: AgentVocabularies,
  user: User,
  threadId: string,
  wait: (agentId: string, conversation: Conversation | null) => boolean = () => false,
): Promise<Result<MoveContext, Failure>> {
  // The row alone: the rules look at the thread, its conversations and pending items, never its ledger.
  const thread = await storage.threads.findRow(user.id, threadId);
  if (thread === null) return fail({ code: 'thread_unavailable' });
  const [conversations, pending, channels, queued] = await Promise.all([
    storage.conversations.listByThread(thread.id),
    storage.conversations.pendingByThread(thread.id),
    channelPort.channels(),
    storage.writer.queued(thread.id),
  ]);
  const latest = conversations.at(-1) ?? null;
  // The agents of the channels, and the conversation's own: no read asks any other.
  const ids = [...channels.flatMap((channel) => channel.agents), ...(latest === null ? [] : [latest.agent])];
  const known = await vocabularies.all(ids, (id) => wait(id, latest));
  const agents = known.map((k) => k.agent);
  const offered = offeredOnly(known);
  const conversation = conversations.at(-1) ?? null;
  return ok({
    thread,
    conversation,
    channels,
    agents,
    offered,
    known,
    input: {
      userId: user.id,
      thread: { id: thread.id, channel: thread.channel, title: thread.title },
      conversation: conversation === null ? null : { agent: conversation.agent, address: conversation.address, moved_to: conversation.moved_to },
      channels,
      agents: offered,
      busy: {
        turnRunning: conversations.some((c) => c.turn_running),
        approvals: pending.filter((p) => p.kind === 'approval').length,
        questions: pending.filter((p) => p.kind === 'question').length,
        queued: queued.length,
      },
    },
  });
}
