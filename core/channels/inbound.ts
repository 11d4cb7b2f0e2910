import type { Failure } from '../../domain/errors.ts';
import { answerFromChat, CHAT_TEXT_LIMIT, isStopRequest } from '../../domain/chat-text.ts';
import { storableText } from '../../domain/text.ts';
import { routeOf } from '../../domain/vocabulary.ts';
import type { AgentVocabularies } from '../agents/vocabularies.ts';
import type { Address, Conversation, Thread, User } from '../../domain/model.ts';
import type { ChatChoice, ChatMessage, ChoiceHandled } from '../../ports/chat-inbound.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import type { Result } from '../../domain/result.ts';
import type { TurnStart } from '../runs/directives.ts';

export type { ChatMessage } from '../../ports/chat-inbound.ts';

/** What became of a chat message; `reply` is what the chat protocol posts back in the thread (once). */
export type ChatOutcome =
  /** Not for the agent: no conversation lives there and the bot was not addressed. */
  | { readonly kind: 'ignored' }
  /** The sender is linked to no console user: told how to link, and nothing runs. */
  | { readonly kind: 'unlinked'; readonly reply: string }
  /** The linked user may not speak there (not a member of the thread), or it could not be taken. */
  | { readonly kind: 'refused'; readonly reply: string }
  /** Several conversations live in the place and the message named none: the sender is told how to reach one. */
  | { readonly kind: 'hint'; readonly reply: string }
  /** The conversation's next directive: run now, or queued behind the running turn. */
  | { readonly kind: 'directive'; readonly thread_id: string; readonly answer: DirectiveAnswer }
  /** A new thread on the channel, opened by the message, whose first turn runs it. */
  | { readonly kind: 'opened'; readonly thread_id: string; readonly answer: DirectiveAnswer }
  /** The reply answered the item the turn waits on. */
  | { readonly kind: 'answered'; readonly thread_id: string; readonly pending_id: string }
  /** `stop`: the running turn is being cancelled. */
  | { readonly kind: 'cancelled'; readonly thread_id: string; readonly run_id: string };

/** How to link, said once to a sender the channel does not know. */
export const HOW_TO_LINK =
  'I do not know who you are yet. In the console, open your account, ask for a link code for this channel, ' +
  'then send me "link <code>" in a direct message. Nothing was run.';

/** How to reach one of a place's conversations, unless the adapter gives its own (said once per place and sender). */
export const HOW_TO_REACH =
  'Several conversations live here. To talk to one, write in its thread or reply to one of its posts. Nothing was run.';

/** The reply to a message longer than a directive may be. */
export const TOO_LONG = `This message is too long for the agent (at most ${CHAT_TEXT_LIMIT} characters). Nothing was run.`;

/** What the chat-inbound use cases read and call: {@link chatInbound} all of it, {@link chatChoice} a part. */
export interface ChatInboundDeps {
  /** The stores a chat message reads, and the console thread it may open. */
  readonly storage: { readonly catalog: Catalog; readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly writer: ConsoleThreads };
  /** The console user a sender's address is linked to on a channel (the world's links and stored ones), or null. */
  readonly userAt: (channel: string, sender: string) => Promise<string | null>;
  /** What the agents offer: a thread a message opens takes its agent's first model and default posture where the channel gives none. */
  readonly vocabularies: Pick<AgentVocabularies, 'one'>;
  readonly startTurn: (turn: TurnStart) => Promise<Result<DirectiveAnswer, Failure>>;
  readonly cancel: (user: User, threadId: string) => Promise<Result<{ run_id: string }, Failure>>;
  readonly answer: (user: User, threadId: string, answers: readonly PendingAnswer[]) => Promise<Result<{ answered: number }, Failure>>;
}

/**
 * Messages people post on a chat channel (contract section 9, inbound): in a thread where a
 * conversation lives, a linked member's message is its next directive (queued while a turn runs;
 * `stop` cancels; a number or an option's name answers the item the turn waits on); a message that
 * addresses the bot elsewhere opens a new thread there, owned by the sender, with the channel's defaults
 * (project, route, posture, effort), else its first agent with that agent's first model and default
 * posture. An unlinked sender is told how to link. Exactly once: the platform's message id is the
 * directive's `message_id`, and a new thread is keyed by the address it opens.
 */
export function chatInbound(deps: ChatInboundDeps) {
  const { storage } = deps;

  async function agentOf(id: string) {
    return (await storage.catalog.agents()).find((agent) => agent.id === id) ?? null;
  }

  /** The living conversation's thread, when the linked user may speak there. */
  async function continued(user: User, conversation: Conversation, message: ChatMessage): Promise<ChatOutcome> {
    const thread = await storage.threads.findRow(user.id, conversation.thread_id);
    // A plain message in the room the sole conversation took: from someone not in it, it was never for the agent.
    if (thread === null && message.reached === 'sole') return { kind: 'ignored' };
    if (thread === null) return { kind: 'refused', reply: 'You are not a member of this thread in the console, so the agent does not take your messages here.' };
    if (isStopRequest(message.text)) {
      const stopped = await deps.cancel(user, thread.id);
      return stopped.ok
        ? { kind: 'cancelled', thread_id: thread.id, run_id: stopped.value.run_id }
        : { kind: 'refused', reply: 'Nothing is running here to stop.' };
    }
    // The oldest item the turn waits on takes a reply that answers it.
    const [waiting] = await storage.conversations.pendingByThread(thread.id);
    const reply = waiting === undefined ? null : answerFromChat(waiting, message.text);
    if (waiting !== undefined && reply !== null) {
      const answered = await deps.answer(user, thread.id, [reply]);
      if (answered.ok) return { kind: 'answered', thread_id: thread.id, pending_id: waiting.id };
    }
    return directive(user, thread, conversation, message, false);
  }

  async function directive(user: User, thread: Thread, conversation: Conversation, message: ChatMessage, opened: boolean): Promise<ChatOutcome> {
    const agent = await agentOf(conversation.agent);
    if (agent === null) return { kind: 'refused', reply: `The agent ${conversation.agent} is not connected any more.` };
    const started = await deps.startTurn({
      thread, conversation, agent, text: message.text, message_id: message.id, author: user.id, permission_mode: null, opened,
      // People in a room do not wait for the agent: what they write while it works runs after.
      when_busy: { mode: 'queue', author: user.id },
    });
    if (!started.ok) return { kind: 'refused', reply: refusal(started.error) };
    return { kind: opened ? 'opened' : 'directive', thread_id: thread.id, answer: started.value };
  }

  async function open(user: User, message: ChatMessage, at: Address): Promise<ChatOutcome> {
    const channel = (await storage.catalog.channels()).find((candidate) => candidate.id === message.channel);
    const defaults = channel?.defaults ?? null;
    // The channel's default route (checked against its agents when the world was loaded), else its first agent.
    const named = defaults?.route == null || channel === undefined ? null : routeOf(defaults.route, channel.agents);
    const agentId = named?.agent ?? channel?.agents[0];
    if (agentId === undefined) return { kind: 'refused', reply: 'No agent is connected to this channel.' };
    // What the world leaves open is what the console's composer would pick: the agent's first model and its
    // default posture, as it offers them (waited for, bounded, while nothing is known of it).
    const offered = (await deps.vocabularies.one(agentId, true))?.offered ?? null;
    const { thread, conversation } = await storage.writer.createConsoleThread({
      owner: user.id,
      key: `${at.channel}:${at.id}`,
      channel: message.channel,
      project: defaults?.project ?? null,
      title: message.text.replace(/\s+/g, ' ').trim().slice(0, 80) || 'Chat thread',
      conversation: {
        agent: agentId,
        model: named?.model ?? offered?.models[0] ?? null,
        permission_mode: defaults?.permission_mode ?? offered?.default_permission_mode ?? null,
        effort: defaults?.effort ?? null,
        address: at,
      },
    });
    return directive(user, thread, conversation, message, true);
  }

  return async function receive(received: ChatMessage): Promise<ChatOutcome> {
    if (received.reached === 'ambiguous') {
      // Nothing runs; a linked sender is told how to reach a conversation (an unlinked one, nothing: it named none).
      return (await deps.userAt(received.channel, received.sender)) === null ? { kind: 'ignored' } : { kind: 'hint', reply: HOW_TO_REACH };
    }
    const living = await storage.conversations.livingAt(received.address);
    if (living === null && received.opens === null) return { kind: 'ignored' };
    const userId = await deps.userAt(received.channel, received.sender);
    // A plain message the sole conversation took is a linked member's directive, or nobody's business.
    if (userId === null) return received.reached === 'sole' ? { kind: 'ignored' } : { kind: 'unlinked', reply: HOW_TO_LINK };
    // A person's text is data: stored as it came, but what cannot be stored (NUL, a lone surrogate) is replaced.
    const message = { ...received, text: storableText(received.text) };
    if (message.text.trim() === '') return { kind: 'ignored' };
    if (message.text.length > CHAT_TEXT_LIMIT) return { kind: 'refused', reply: TOO_LONG };
    const user: User = { id: userId, name: userId };
    if (living !== null) return continued(user, living, message);
    return open(user, message, message.opens!);
  };
}

/** The reply to a click on an item that no longer waits (answered by another, or its turn ended). */
export const NOT_WAITING = 'This was answered already, or the turn no longer waits on it.';

/**
 * A click on an ask's button (a platform with buttons, contract section 10): the item the conversation living
 * where the ask was posted waits on, answered with the option the button names, by the clicker's console
 * user, with the same rights as a reply in words (a member of the thread). What cannot be answered is refused
 * with a reply for the clicker alone. Once per click: the protocol claims its id before it comes here.
 */
export function chatChoice(deps: {
  readonly storage: Pick<ChatInboundDeps['storage'], 'threads' | 'conversations'>;
  readonly userAt: ChatInboundDeps['userAt'];
  readonly answer: ChatInboundDeps['answer'];
}) {
  const { storage } = deps;
  const refused = (reply: string): ChoiceHandled => ({ kind: 'refused', reply });

  return async function choose(choice: ChatChoice): Promise<ChoiceHandled> {
    const living = await storage.conversations.livingAt(choice.address);
    if (living === null) return refused('This conversation is not here any more.');
    const userId = await deps.userAt(choice.channel, choice.sender);
    if (userId === null) return refused(HOW_TO_LINK);
    const thread = await storage.threads.findRow(userId, living.thread_id);
    if (thread === null) return refused('You are not a member of this thread in the console, so you cannot answer here.');
    const pending = (await storage.conversations.pendingByThread(thread.id)).find((item) => item.id === choice.pending_id);
    if (pending === undefined) return refused(NOT_WAITING);
    const option = pending.options.find((candidate) => candidate.id === choice.option_id);
    if (option === undefined) return refused('That option is not one this asks for.');
    const answered = await deps.answer({ id: userId, name: userId }, thread.id, [{ id: pending.id, option: option.id }]);
    if (!answered.ok) {
      const { code, detail } = answered.error;
      return refused(`This could not be answered (${code}${detail === undefined ? '' : `: ${detail}`}).`);
    }
    return { kind: 'answered', thread_id: thread.id, option: option.name };
  };
}

/** A refusal as a chat reply: the failure's detail, or what its code means. */
function refusal(failure: Failure): string {
  switch (failure.code) {
    case 'queue_full':
      return 'Too many messages are waiting for the agent here; try again when it has caught up.';
    case 'conversation_moved':
      return 'This conversation has moved on; continue it where it is now.';
    default:
      return `The agent could not take this message (${failure.code}${failure.detail === undefined ? '' : `: ${failure.detail}`}).`;
  }
}

export type ChatInbound = ReturnType<typeof chatInbound>;
