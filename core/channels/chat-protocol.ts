import type {
  ChatChoice, ChatHandled, ChatHandlers, ChatInvitation, ChatMessage, ChatSession, ChoiceHandled, DirectHandled, InvitationAnswer, InvitationHandled,
} from '../../ports/chat-inbound.ts';
import { SERVED_PLACES_MAX, type ChatInbox } from '../../ports/chat-inbox.ts';
import type { Cancel, Clock } from '../../ports/clock.ts';
import type { DeliveryOutbox } from '../../ports/delivery-outbox.ts';
import type { DerivedId } from '../../ports/derived-id.ts';
import type { NewId } from '../../ports/new-id.ts';
import { systemClock } from '../clock.ts';
import { HOW_TO_LINK, type ChatOutcome } from './inbound.ts';

/**
 * How long a claim holds unless renewed, unless told: a listener renews the claims of the messages it is
 * handling every third of it (a heartbeat, as a turn's lease is renewed), however long the handling takes, so
 * it can be short: a listener that died (kill -9, a host gone) stops renewing, and another takes its message
 * within this long, not after the longest a handling may take.
 */
export const CHAT_CLAIM_MS = 10_000;

/** A sender is sent the help text at most once in this long (a bot answering the bot's help ends there). */
export const HELP_EVERY_MS = 10 * 60_000;

/** The answer to a direct message that is not `link <code>`, unless the adapter gives its own. */
export const DIRECT_HELP =
  'I am the console bot. To link this address to your console user, ask the console for a link code (Chat links) ' +
  'and send me "link <code>" here. In a room, talk in the thread of a conversation, or start a message with my nick ' +
  '("console: ...") to start one.';

/** The answer to an invitation once the channel serves as many places as it may. */
export const TOO_MANY_PLACES = `I serve ${SERVED_PLACES_MAX} rooms on this channel already, the most I may, so I did not join.`;

/** The answer to `link <code>` past the sender's limit of attempts. */
export const TOO_MANY_LINK_ATTEMPTS = 'Too many link attempts from this address: wait a minute, then try again.';

/**
 * The chat-inbound protocol (contract section 9, inbound), once for every chat platform: what a channel's
 * adapter is handed as `ChannelPort.listen`'s {@link ChatHandlers}. Each listener takes a `session()` and,
 * for every message people post, calls it; the adapter only translates the platform's events and keeps its
 * cursors. What a new adapter (Slack, ...) does:
 *
 * 1. Reads a person's message into a `ChatMessage`: the channel, the `address` it was posted at (a thread), the
 *    `sender` as the platform asserts it (never a field the sender wrote), the text (the bot's mention taken off),
 *    the platform's stable `id`, and `opens` (the address of the new thread it would start) when it addresses
 *    the bot. Before that it drops what is nobody's directive: the bot's own posts, other bots', blank ones.
 * 2. Calls `session.message(message, { place, replyAt })`, one message at a time per place, in order: `place`
 *    is the top-level place (a room, a Slack channel) and names the claim `<place>/<id>` on the channel;
 *    `replyAt` is where a reply goes (the message's thread, or the thread it would open). The protocol claims
 *    the message (one listener, across instances and reconnects, ever handles it), hands it to the app
 *    (`receive`: a directive, an answer, a stop, a new thread, or a reply), posts the reply through the
 *    delivery outbox under an id derived from the claim (a retry, or a second instance, posts it once; the
 *    how-to-link reply once per sender and channel), and marks it done.
 * 3. Moves the place's cursor (`handlers.inbox.advance`) past a message answered `handled` or `seen`; on `held`
 *    (another listener has it and is not done: it may have died mid-way) or a rejection (storage away) it
 *    keeps the cursor before it and reads the place's history again a few seconds later, until it is done or
 *    its claim lapses and this listener takes it.
 * 4. Hands a direct message to the bot to `session.direct(message, answer)`: `link <code>` is redeemed for
 *    the sender (at most `linkAttempt` allows), anything else gets the help text (at most once in ten minutes
 *    per sender); `answer` sends the reply on the platform, and only then is the message done. On `held` (another
 *    listener claimed it and is not done: it may have died mid-way) the adapter reads it again later (from the
 *    platform's history of the bot's direct messages, as a room's), until its claim lapses and this one answers it.
 * 5. Hands an invitation of the bot to a place (an XMPP room) to `session.invited(invitation, answer)`, the inviter
 *    as the platform asserts it: a linked inviter's place is served (kept, joined again after a restart) and
 *    `answer.accept` joins it and says so there; anyone else is told why not (`answer.decline`, to them alone).
 *    A message outside any thread that names no conversation is handed with `reached` (`sole`: the place's only
 *    conversation takes a linked member's message; `ambiguous`: a linked sender is told once per place how to
 *    reach one).
 * 6. On a platform with buttons (an ask's options, `Delivery.ask`), hands a click to `session.choose(choice)`:
 *    claimed as `choice/<id>`, answered by the app (`choose`), marked done; the adapter shows what it answers
 *    (who chose what, or the refusal to the clicker alone). A click claimed before answers `seen`.
 */
export function chatProtocol(deps: {
  /** The inbound use case (core/channels/inbound.ts): what the app makes of a message. */
  readonly receive: (message: ChatMessage) => Promise<ChatOutcome>;
  /** The click use case (core/channels/inbound.ts, `chatChoice`): what the app makes of a click on an ask's button. */
  readonly choose: (choice: ChatChoice) => Promise<ChoiceHandled>;
  /** `link <code>` from `address` on the channel (core/channels/links.ts): the answer's `reply` goes back to the sender. */
  readonly redeemLinkCode: (channel: string, address: string, code: string) => Promise<{ readonly reply: string }>;
  /** Adds a post to the delivery outbox (one per id) and has it dispatched now. */
  readonly post: DeliveryOutbox['add'];
  /** The messages claimed and handled, and each place's cursor (durable, shared by the instances). */
  readonly inbox: ChatInbox;
  /** Counts one `link` attempt of a sender on a channel; false once it is past its limit. */
  readonly linkAttempt: (channel: string, sender: string) => boolean;
  /** The console user a sender's address is linked to on a channel, or null: who may invite the bot. */
  readonly userAt: (channel: string, sender: string) => Promise<string | null>;
  /** A new id: each session's holder of its claims. */
  readonly newId: NewId;
  /** A reply's delivery id from the message it answers: the same on every instance. */
  readonly derivedId: DerivedId;
  /** Milliseconds since the epoch; the clock's by default. When the help text was last sent is told by it. */
  readonly now?: () => number;
  /** Schedules the renewal of the claims a session holds; the host's by default. */
  readonly clock?: Clock;
}): ChatHandlers {
  const { inbox } = deps;
  const clock = deps.clock ?? systemClock;
  const now = deps.now ?? (() => clock.now());

  function session(options: { readonly claimMs?: number; readonly help?: string; readonly hint?: string } = {}): ChatSession {
    const holder = `chat-${deps.newId()}`;
    const claimMs = options.claimMs ?? CHAT_CLAIM_MS;
    const help = options.help ?? DIRECT_HELP;
    /** When each sender (by channel) was last sent the help text. */
    const helped = new Map<string, number>();
    /** The claims this session holds while it handles their messages, by `channel\u0000key`: renewed until let go. */
    const holding = new Map<string, { readonly channel: string; readonly key: string; count: number }>();
    let stopRenewing: Cancel | null = null;

    /**
     * Claims `key` for this session and, once claimed, renews it every third of `claimMs` until `let go` (the
     * message done, or its handling failed: then it lapses, and is read again here or elsewhere). A renewal is
     * the claim asked again by its holder; one that fails (storage away) is not retried: the next one is.
     */
    async function claim(channel: string, key: string): Promise<{ readonly letGo: () => void } | null> {
      if (!(await inbox.claim(channel, key, holder, claimMs))) return null;
      const id = `${channel}\u0000${key}`;
      const held = holding.get(id) ?? { channel, key, count: 0 };
      held.count += 1;
      holding.set(id, held);
      stopRenewing ??= clock.every(Math.max(1, Math.floor(claimMs / 3)), () => {
        for (const renewed of holding.values()) void inbox.claim(renewed.channel, renewed.key, holder, claimMs).catch(() => {});
      });
      let gone = false;
      return {
        letGo: () => {
          if (gone) return;
          gone = true;
          held.count -= 1;
          if (held.count === 0) holding.delete(id);
          if (holding.size === 0) {
            stopRenewing?.();
            stopRenewing = null;
          }
        },
      };
    }

    async function message(message: ChatMessage, placing: { readonly place: string; readonly replyAt: string }): Promise<ChatHandled> {
      const { channel } = message;
      const key = `${placing.place}/${message.id}`;
      const claimed = await claim(channel, key);
      if (claimed === null) {
        // Done: handled (here or elsewhere), read past it. Not done: held, perhaps by a listener that died.
        return (await inbox.isDone(channel, key)) ? { kind: 'seen' } : { kind: 'held' };
      }
      try {
        return await handle(message, placing, key);
      } finally {
        claimed.letGo();
      }
    }

    async function handle(message: ChatMessage, placing: { readonly place: string; readonly replyAt: string }, key: string): Promise<ChatHandled> {
      const { channel } = message;
      const outcome = await deps.receive(message);
      if (outcome.kind === 'unlinked' || outcome.kind === 'refused' || outcome.kind === 'hint') {
        // The how-to-link reply goes to a sender once per channel, the hint once per place and sender (remembered in the inbox).
        const told = outcome.kind === 'hint' ? `hint/${placing.place}/${message.sender}` : `told/${message.sender}`;
        const tell = outcome.kind === 'refused' || (await inbox.claim(channel, told, holder, claimMs));
        if (tell) {
          const at = placing.replyAt;
          await deps.post({
            id: deps.derivedId(`${channel}\u0000${key}\u0000reply`), channel, place: at, new_thread: false, address: { channel, id: at }, title: '',
            text: outcome.kind === 'hint' ? options.hint ?? outcome.reply : outcome.reply,
            // For the sender alone where the platform can (how to link, why not: nobody else's business).
            to: message.sender,
          });
          if (outcome.kind !== 'refused') await inbox.done(channel, told);
        }
      }
      await inbox.done(channel, key);
      return { kind: 'handled', outcome: outcome.kind };
    }

    async function direct(
      message: { readonly channel: string; readonly sender: string; readonly text: string; readonly id: string | null },
      answer: (reply: string) => Promise<void>,
    ): Promise<DirectHandled> {
      const { channel, sender } = message;
      const key = message.id === null ? null : `dm/${sender}/${message.id}`;
      const claimed = key === null ? null : await claim(channel, key);
      if (key !== null && claimed === null) return (await inbox.isDone(channel, key)) ? 'seen' : 'held';
      try {
        return await answerDirect(message, answer, key);
      } finally {
        claimed?.letGo();
      }
    }

    async function answerDirect(
      message: { readonly channel: string; readonly sender: string; readonly text: string },
      answer: (reply: string) => Promise<void>,
      key: string | null,
    ): Promise<DirectHandled> {
      const { channel, sender } = message;
      const link = /^link\s+(.+)$/is.exec(message.text);
      let reply: string | null;
      let handled: DirectHandled;
      if (link !== null) {
        reply = deps.linkAttempt(channel, sender) ? (await deps.redeemLinkCode(channel, sender, link[1]!)).reply : TOO_MANY_LINK_ATTEMPTS;
        handled = 'link';
      } else {
        const who = `${channel}\u0000${sender}`;
        const last = helped.get(who);
        reply = last !== undefined && now() - last < HELP_EVERY_MS ? null : help;
        if (reply !== null) helped.set(who, now());
        handled = reply === null ? 'quiet' : 'help';
      }
      if (reply !== null) await answer(reply);
      if (key !== null) await inbox.done(channel, key);
      return handled;
    }

    async function choose(choice: ChatChoice): Promise<ChoiceHandled> {
      const key = `choice/${choice.id}`;
      // A click redelivered (the platform retries one it got no answer to in time), or taken by another listener.
      const claimed = await claim(choice.channel, key);
      if (claimed === null) return { kind: 'seen' };
      try {
        const handled = await deps.choose(choice);
        await inbox.done(choice.channel, key);
        return handled;
      } finally {
        claimed.letGo();
      }
    }

    async function invited(invitation: ChatInvitation, answer: InvitationAnswer): Promise<InvitationHandled> {
      const { channel, sender, place } = invitation;
      const key = invitation.id === null ? null : `invite/${place}/${sender}/${invitation.id}`;
      const claimed = key === null ? null : await claim(channel, key);
      if (key !== null && claimed === null) return (await inbox.isDone(channel, key)) ? 'seen' : 'held';
      try {
        let handled: InvitationHandled;
        if ((await deps.userAt(channel, sender)) === null) {
          // Told how to link at most as often as the help text: invitations cost the inviter nothing.
          const who = `${channel}\u0000${sender}`;
          const last = helped.get(who);
          if (last === undefined || now() - last >= HELP_EVERY_MS) {
            helped.set(who, now());
            await answer.decline(HOW_TO_LINK);
          }
          handled = 'unlinked';
        } else {
          const served = await inbox.serve(channel, place);
          if (served === 'full') await answer.decline(TOO_MANY_PLACES);
          else await answer.accept(served === 'added');
          handled = served === 'full' ? 'full' : 'accepted';
        }
        if (key !== null) await inbox.done(channel, key);
        return handled;
      } finally {
        claimed?.letGo();
      }
    }

    return { message, direct, choose, invited };
  }

  return { session, inbox };
}
