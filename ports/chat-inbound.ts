import type { Address } from '../domain/model.ts';
import type { ChatInbox } from './chat-inbox.ts';

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
  /**
   * How a message posted outside any thread of its place came to `address`, when nothing in it named the
   * conversation (it was neither in its thread, nor a reply to one of its posts, nor a message opening a new one):
   * `sole`, the only conversation living in the place took it (a plain message: taken from a linked member who
   * may speak there, else nothing is said, since people talk among themselves there too); `ambiguous`, several
   * live there and nothing said which (a linked sender is told once per place how to reach one; nothing runs).
   * Absent: posted in the thread, replied to, or addressed.
   */
  readonly reached?: 'sole' | 'ambiguous';
}

/**
 * What the app made of a chat message (the kinds of core/channels/inbound.ts's outcome): `ignored` (not
 * for the agent), `unlinked` (told how to link, nothing runs), `refused` (told why), `hint` (told how to
 * reach one of the place's conversations, once per place and sender; nothing runs), `directive`,
 * `opened` (a new thread), `answered` (the item the turn waits on), `cancelled` (`stop`).
 */
export type ChatOutcomeKind = 'ignored' | 'unlinked' | 'refused' | 'hint' | 'directive' | 'opened' | 'answered' | 'cancelled';

/** Where a room message was read, as only its adapter knows it. */
export interface ChatPlacing {
  /** The top-level place it was posted in (a room): the message is claimed on the channel as `<place>/<id>`. */
  readonly place: string;
  /** The address id a reply goes to: the message's thread, or (posted outside a thread) the thread it would open, named by it. */
  readonly replyAt: string;
}

/** What the protocol did with a room message. */
export type ChatHandled =
  /** Handled now, by this listener: what the app made of it (its reply, if any, is in the delivery outbox). */
  | { readonly kind: 'handled'; readonly outcome: ChatOutcomeKind }
  /** Handled before (here, by another instance, before a restart): nothing was done; read past it. */
  | { readonly kind: 'seen' }
  /**
   * Claimed by another holder and not done: it is handling it now, or died mid-way. Keep the place's
   * cursor before it and read it again later (its claim lapses, and then this listener takes it).
   */
  | { readonly kind: 'held' };

/** A direct message to the bot (not in a room), as its adapter read it. */
export interface DirectChat {
  readonly channel: string;
  /** The sender's address on the platform (a bare JID). */
  readonly sender: string;
  /** What they wrote, trimmed. Never logged: `link <code>` carries a code. */
  readonly text: string;
  /** The platform's stable id of the message (the server's stanza id), or null when it gives none (then it is not claimed). */
  readonly id: string | null;
}

/**
 * What became of a direct message: `link` (a `link <code>`, redeemed or refused past the rate limit;
 * answered), `help` (the help text answered), `quiet` (the help text was sent to that sender lately:
 * nothing answered), `seen` (handled before, here or by another listener: nothing done), `held` (claimed
 * by another listener and not done: it is answering it now, or died mid-way; read it again later, as a
 * room's held message: its claim lapses, and then this listener takes it).
 */
export type DirectHandled = 'link' | 'help' | 'quiet' | 'seen' | 'held';

/**
 * An invitation of the bot to a place (an XMPP room) it does not serve yet, as its adapter read it: `sender`
 * is who the platform asserts invited it (never a name the invitation's text gives).
 */
export interface ChatInvitation {
  readonly channel: string;
  /** The place the bot is invited to (a room's bare JID). */
  readonly place: string;
  readonly sender: string;
  /** The platform's id of the invitation, or null when it gives none (then it is not claimed). */
  readonly id: string | null;
}

/**
 * What became of an invitation: `accepted` (the sender is linked: the place is served from now on, kept across
 * restarts, and the adapter joined it and said so there), `unlinked` (the sender was told how to link, at most
 * once in ten minutes; nothing joined), `full` (the channel serves as many places as it may: the sender was told),
 * `seen` (handled before), `held` (claimed by another listener and not done).
 */
export type InvitationHandled = 'accepted' | 'unlinked' | 'full' | 'seen' | 'held';

/** What the adapter does for an invitation the protocol took: join the place and say so there, or tell the sender why not. */
export interface InvitationAnswer {
  /**
   * Joins the place (served already when this is called) and, when it was not served before (`fresh`), says there
   * who invited the bot: once, however many instances heard an invitation the platform gave no id.
   */
  accept(fresh: boolean): Promise<void>;
  /** Tells the sender alone why the bot does not come (a direct message). */
  decline(reply: string): Promise<void>;
}

/** A click on one of an ask's buttons (Slack's Block Kit), as its adapter read it. */
export interface ChatChoice {
  readonly channel: string;
  /** Where the ask was posted (a thread's address): the conversation living there holds the item. */
  readonly address: Address;
  /** Who clicked, as the platform asserts it (the interaction's user id). */
  readonly sender: string;
  /** The item and the option the button names (its value, `<pending id>:<option id>`). */
  readonly pending_id: string;
  readonly option_id: string;
  /** The platform's stable id of the click: claimed, so a redelivered one answers nothing twice. */
  readonly id: string;
}

/** What the app made of a click: answered (with the chosen option's name), refused (why, for the clicker alone), or seen before. */
export type ChoiceHandled =
  | { readonly kind: 'answered'; readonly thread_id: string; readonly option: string }
  | { readonly kind: 'refused'; readonly reply: string }
  | { readonly kind: 'seen' };

/**
 * The chat-inbound protocol as one listener uses it: every message is claimed (one handler across
 * instances and reconnects), handed to the app, answered once, and marked done.
 */
export interface ChatSession {
  /**
   * A person's message in a room: claimed as `<place>/<id>`, handed to the app, its reply (how to link, said
   * once per sender and channel; a refusal) posted at `replyAt` through the delivery outbox under an id derived
   * from the claim, so a retry or a second instance posts it once; then marked done. Rejects when storage
   * fails: the message is not done, and is read again (its claim is this listener's; another one's lapses).
   */
  message(message: ChatMessage, placing: ChatPlacing): Promise<ChatHandled>;
  /**
   * A direct message to the bot: claimed by its id, then `link <code>` is redeemed for the sender (at most
   * a few attempts a minute per sender and channel), anything else answered with the help text (at most
   * once in ten minutes per sender); `answer` sends the reply back to the sender on the platform, and the
   * message is marked done once it was sent.
   */
  direct(message: DirectChat, answer: (reply: string) => Promise<void>): Promise<DirectHandled>;
  /**
   * A click on an ask's button: claimed by its id, then, when the clicker is linked to a console user who
   * may answer in that thread and the item still waits, answered with that option (`answered`, with its name:
   * the adapter shows who chose what); else `refused` with a reply for the clicker alone (unlinked, not a
   * member, nothing waits on it any more). Marked done either way.
   */
  choose(choice: ChatChoice): Promise<ChoiceHandled>;
  /**
   * An invitation to a place: claimed by its id, then, when the inviter is linked to a console user, the place
   * is served (`ChatInbox.serve`: kept, joined again after a restart, at most a bound per channel) and
   * `answer.accept` joins it; else `answer.decline` tells the inviter how to link (at most once in ten minutes per
   * sender) or that the channel serves too many places. Marked done once answered.
   */
  invited(invitation: ChatInvitation, answer: InvitationAnswer): Promise<InvitationHandled>;
}

/**
 * What a chat channel's adapter is handed once the app is built (it is built after the channels): the
 * chat-inbound protocol (core/channels/chat-protocol.ts), and where the adapter keeps what it has read.
 * The adapter translates the platform's events into {@link ChatMessage}s and {@link DirectChat}s and
 * calls a session; claims, replies and links are the protocol's.
 */
export interface ChatHandlers {
  /**
   * A session for one listener (its claims are held under a holder of its own, and it remembers whom it
   * sent the help text). `claimMs`: how long a claim holds before another instance may take the message
   * (60 s by default); `help`: the text a direct message that is not `link <code>` is answered with; `hint`: what a
   * sender is told once per place when several conversations live there and their message named none.
   */
  session(options?: { readonly claimMs?: number; readonly help?: string; readonly hint?: string }): ChatSession;
  /** Each place's cursor (the last message handled there), the occupants the platform asserted, the places served (durable). */
  readonly inbox: Pick<ChatInbox, 'cursor' | 'advance' | 'rememberOccupant' | 'occupant' | 'served' | 'unserve'>;
}
