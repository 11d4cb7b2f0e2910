import type { Address } from '../domain/model.ts';
import type { Delivery } from './channel-port.ts';
import type { ChatInbox } from './chat-inbox.ts';
import type { DirectiveAnswer } from './console-writer.ts';

/** A person's message on a chat channel, as its adapter read it from the platform. */
export interface ChatMessage {
  readonly channel: string;
  /** Where it was posted (a room's thread): a conversation living there takes it as its next directive. */
  readonly address: Address;
  /**
   * Where a new thread would live when the message addresses the bot outside a living conversation
   * (a new thread of that room, named from the message so a repeat opens the same one); null: it does not
   * address the bot, and nothing starts.
   */
  readonly opens: Address | null;
  /** The sender's address on the platform (a bare JID): who it is linked to decides who speaks. */
  readonly sender: string;
  /** What the person wrote (the bot's nick taken off when it addressed the bot). */
  readonly text: string;
  /** The platform's stable id of the message (a stanza id): the directive's `message_id`, so a repeat runs nothing twice. */
  readonly id: string;
}

/** What became of a chat message; `reply` is what the adapter posts back in the thread (once). */
export type ChatOutcome =
  /** Not for the agent: no conversation lives there and the bot was not addressed. */
  | { readonly kind: 'ignored' }
  /** The sender is linked to no console user: told how to link, and nothing runs. */
  | { readonly kind: 'unlinked'; readonly reply: string }
  /** The linked user may not speak there (not a member of the thread), or it could not be taken. */
  | { readonly kind: 'refused'; readonly reply: string }
  /** The conversation's next directive: run now, or queued behind the running turn. */
  | { readonly kind: 'directive'; readonly thread_id: string; readonly answer: DirectiveAnswer }
  /** A new thread on the channel, opened by the message, whose first turn runs it. */
  | { readonly kind: 'opened'; readonly thread_id: string; readonly answer: DirectiveAnswer }
  /** The reply answered the item the turn waits on. */
  | { readonly kind: 'answered'; readonly thread_id: string; readonly pending_id: string }
  /** `stop`: the running turn is being cancelled. */
  | { readonly kind: 'cancelled'; readonly thread_id: string; readonly run_id: string };

/**
 * What a chat channel's adapter is handed once the app is built (it is built after the channels):
 * where people's messages go, how a `link <code>` is redeemed, how a reply is posted (through the
 * delivery outbox, so it is posted once), and where the adapter keeps what it has read.
 */
export interface ChatHandlers {
  /** A person's message: a directive, an answer, a stop, or a reply to post (core/channels/inbound.ts). */
  readonly receive: (message: ChatMessage) => Promise<ChatOutcome>;
  /** `link <code>` sent to the bot from `address`: the answer's `reply` goes back to the sender. */
  readonly redeemLinkCode: (channel: string, address: string, code: string) => Promise<{ readonly kind: string; readonly reply: string }>;
  /** Adds a post to the delivery outbox (one per id) and has it dispatched now. */
  readonly post: (delivery: Delivery) => Promise<void>;
  /** The messages claimed and handled, and each room's last one read (durable). */
  readonly inbox: ChatInbox;
  /** Counts one `link` attempt of a sender; false once it is past its limit (5 a minute). */
  readonly linkAttempt: (channel: string, sender: string) => boolean;
}
