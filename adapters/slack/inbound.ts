import { parseSlackAddress, slackThreadAddress } from '../../domain/slack.ts';
import type { ChatCursor } from '../../ports/chat-inbox.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import type { Logger } from '../../ports/logger.ts';
import { answeredBlocks } from './blocks.ts';
import type { SlackConnection, SlackEnvelope } from './connection.ts';
import { readChoice, readMessage, type SlackBlockActions, type SlackMessageEvent } from './events.ts';
import { escapeMrkdwn } from './mrkdwn.ts';
import type { SlackMessage } from './places.ts';

/** The answer to a direct message that is not `link <code>`. */
export const SLACK_HELP =
  'I am the console bot. To link your Slack account to your console user, ask the console for a link code (Chat links) ' +
  'and send me "link <code>" here. In a channel, reply in the thread of a conversation, or mention me to start one.';

/** A place whose read failed is read again after this long, doubled on each failure up to {@link RETRY_MAX_MS}. */
const RETRY_MS = 5_000;
const RETRY_MAX_MS = 5 * 60_000;
/** Every place where a conversation lives is read again this often (what another instance took and died with, say). */
const SWEEP_EVERY_MS = 5 * 60_000;
/** At most this many pages (200 messages each) are read in one catch-up of a place. */
const CATCH_UP_PAGES = 25;
/** Slack's answers that say a place will not be read whatever the wait: it is not read again until the next sweep. */
const PERMANENT = /thread_not_found|channel_not_found|not_in_channel|is_archived|missing_scope|invalid_auth|account_inactive/;

/** A message claimed by another listener and not done: the place's cursor stays before it. */
class HeldElsewhere extends Error {
  override readonly name = 'HeldElsewhere';
}

/** A direct conversation with the bot (Slack's `im` ids start with D). */
const isDirect = (place: string): boolean => place.startsWith('D') && !place.includes(':');
const cursorAt = (ts: string): ChatCursor => ({ id: ts, at: new Date(Number(ts) * 1000).toISOString() });
/** The `ts` just before `ts` (a cursor there reads `ts` next). */
const justBefore = (ts: string): string => (Number(ts) - 0.000001).toFixed(6);

/**
 * The inbound side of a slack channel (contract section 10). Every Socket Mode envelope is acknowledged as
 * it arrives. People's messages are read into the chat-inbound protocol's terms and handed to it (claimed
 * once across instances, redeliveries and reconnects by `<channel>:<ts>`), one at a time per Slack channel;
 * a click on an ask's button answers it (the message then says who chose what) or is refused to the clicker
 * alone; a direct message links or gets the help text.
 *
 * Nothing is lost: each place (a thread where a conversation lives, and each channel's top-level messages,
 * where mentions start threads) has a cursor in the chat inbox that only a read of the place moves, message by
 * message in order, and never past one that is not done (held by another instance, or failed). Places are read
 * from their cursors on every (re)connect, after a failure (with a doubling wait), and every few minutes; a
 * live message is handled at once, and a message at or before its place's cursor (an envelope Slack kept
 * while the app was away and sends late) is not taken again. A place never read starts where the bot's part
 * begins: a thread after the bot's first post there, or at the message that opened it; a channel at its latest.
 */
export function slackInbound(options: {
  readonly channelId: string;
  readonly connection: SlackConnection;
  readonly handlers: ChatHandlers;
  /** The conversations living on the channel (their addresses): the threads read on reconnect. */
  readonly living: () => Promise<readonly { address: string }[]>;
  /** The Slack channels the bot is a member of: their mentions are read again on reconnect. */
  readonly channels: () => Promise<readonly { id: string }[]>;
  /** The bot's direct conversations (`im`): those it was sent a message in are read again on reconnect. */
  readonly directs: () => Promise<readonly { id: string }[]>;
  readonly log: Logger;
  readonly claimMs?: number;
}) {
  const { channelId, connection, handlers, log } = options;
  const { inbox } = handlers;
  const chat = handlers.session({ ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }), help: SLACK_HELP });
  /** Each Slack channel's work, one message at a time, in order. */
  const chains = new Map<string, Promise<void>>();
  /** Places with a read scheduled after a failure, and the wait before each one's next such read (reset by a read that went through). */
  const scheduled = new Set<string>();
  const waits = new Map<string, number>();
  const timers = new Set<ReturnType<typeof setTimeout>>();
  let closed = false;

  const later = (call: () => void, ms: number) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (!closed) call();
    }, ms);
    timer.unref?.();
    timers.add(timer);
  };

  const enqueue = (channel: string, work: () => Promise<void>): Promise<void> => {
    const next = (chains.get(channel) ?? Promise.resolve()).then(() => (closed ? undefined : work()));
    chains.set(channel, next.catch(() => {}));
    return next;
  };

  /** Reads `place` again after a failure: once at a time per place, waiting longer each time; never for a permanent refusal. */
  function readAgain(place: string, error: unknown): void {
    if (closed) return;
    const permanent = PERMANENT.test(String((error as { data?: { error?: string } })?.data?.error ?? (error as Error)?.message ?? error));
    if (error instanceof HeldElsewhere) log.info({ place, message: error.message }, 'a slack message is claimed and not done yet; its place is read again');
    else log.warn({ err: error, place, permanent }, permanent ? 'a slack place cannot be read; it is read again at the next sweep' : 'a slack place could not be read; it is read again');
    if (permanent || scheduled.has(place)) return;
    const wait = waits.get(place) ?? RETRY_MS;
    waits.set(place, Math.min(wait * 2, RETRY_MAX_MS));
    scheduled.add(place);
    later(() => {
      scheduled.delete(place);
      void (place.includes(':') ? catchUpThread(place) : isDirect(place) ? catchUpDirect(place) : catchUpChannel(place));
    }, wait);
  }

  /** Sets a place's cursor when it has none (its start), leaving one that is set as it is. */
  async function startAt(place: string, ts: string): Promise<void> {
    if ((await inbox.cursor(channelId, place)) === null) await inbox.advance(channelId, place, cursorAt(ts));
  }

  /** Hands a message in a channel to the protocol; throws when it must be read again (held elsewhere, storage away). */
  async function channelMessage(event: SlackMessageEvent, live: boolean): Promise<void> {
    const bot = connection.bot;
    if (bot === null) throw new Error('the bot is not known yet');
    const read = readMessage(channelId, bot.userId, event);
    if (read.kind !== 'room') return;
    // A channel's own chatter (not in a thread, not to the bot): nothing could take it, nothing is claimed.
    if (read.thread === null && read.message.opens === null) return;
    if (live) {
      // At or before where its place was read to: handled already, or from before the bot's part began there.
      const place = read.thread === null ? event.channel! : slackThreadAddress(event.channel!, read.thread);
      const cursor = await inbox.cursor(channelId, place);
      if (cursor !== null && Number(read.ts) <= Number(cursor.id)) return;
    }
    const handled = await chat.message(read.message, read.placing);
    if (handled.kind === 'held') throw new HeldElsewhere(read.message.id);
    if (handled.kind !== 'handled') return;
    log.info({ message: read.message.id, outcome: handled.outcome }, 'slack message handled');
    // A thread it opened is the agent's from this message on: read from there (the reply that follows is not skipped).
    if (handled.outcome === 'opened' && read.message.opens !== null) await startAt(read.message.opens.id, justBefore(read.ts));
  }

  /** A live message, in its channel's order; on failure its place is read again from its cursor (started just before it when never read). */
  function live(event: SlackMessageEvent): Promise<void> {
    const channel = event.channel ?? '';
    return enqueue(channel, () => channelMessage(event, true)).catch(async (error: unknown) => {
      if (closed) return;
      const place = event.thread_ts === undefined ? channel : slackThreadAddress(channel, event.thread_ts);
      if (event.ts !== undefined) await startAt(place, justBefore(event.ts)).catch(() => {});
      readAgain(place, error);
    });
  }

  /**
   * Hands a direct message to the protocol; throws when it must be read again (held by another listener, which
   * may have died with it, or storage away). `live`: one at or before its conversation's cursor is done already.
   */
  async function directMessage(event: SlackMessageEvent, live: boolean): Promise<void> {
    const bot = connection.bot;
    if (bot === null) throw new Error('the bot is not known yet');
    const read = readMessage(channelId, bot.userId, event);
    if (read.kind !== 'direct') return;
    const ts = read.id.slice(read.im.length + 1);
    if (live) {
      const cursor = await inbox.cursor(channelId, read.im);
      if (cursor !== null && Number(ts) <= Number(cursor.id)) return;
      // The direct conversation is read back from here on (a sweep, a reconnect): one this listener dies with is not lost.
      if (cursor === null) await inbox.advance(channelId, read.im, cursorAt(justBefore(ts)));
    }
    const handled = await chat.direct({ channel: channelId, sender: read.sender, text: read.text, id: read.id }, async (reply) => {
      await connection.call('chat.postMessage', { channel: read.im, text: escapeMrkdwn(reply) });
    });
    if (handled === 'held') throw new HeldElsewhere(read.id);
    // Never the text: the code links an account until it is used or expires.
    if (handled === 'link') log.info({ from: read.sender }, 'slack link code received');
  }

  /** A live direct message, in its conversation's order; on failure the conversation is read again from its cursor. */
  function direct(event: SlackMessageEvent): Promise<void> {
    const im = event.channel ?? '';
    return enqueue(im, () => directMessage(event, true)).catch((error: unknown) => readAgain(im, error));
  }

  async function click(actions: SlackBlockActions): Promise<void> {
    const read = readChoice(channelId, actions);
    if (read === null) return;
    const handled = await chat.choose(read.choice);
    if (handled.kind === 'answered') {
      const blocks = answeredBlocks((actions.message?.blocks ?? []) as Parameters<typeof answeredBlocks>[0], read.choice.sender, handled.option);
      await connection.call('chat.update', { channel: read.channel, ts: read.messageTs, blocks, text: `<@${read.choice.sender}> chose ${escapeMrkdwn(handled.option)}` });
      log.info({ thread: handled.thread_id, pending: read.choice.pending_id }, 'slack button answered');
    } else if (handled.kind === 'refused') {
      await connection.call('chat.postEphemeral', { channel: read.channel, user: read.choice.sender, thread_ts: read.threadTs, text: escapeMrkdwn(handled.reply) });
    }
  }

  /** Reads a history method's pages from `oldest` (exclusive), oldest message first. */
  async function readAfter(method: string, args: Record<string, unknown>): Promise<SlackMessage[]> {
    const read: SlackMessage[] = [];
    let page: string | undefined;
    for (let pages = 0; pages < CATCH_UP_PAGES; pages++) {
      const answer = await connection.call<{ messages?: SlackMessage[]; response_metadata?: { next_cursor?: string } }>(method, {
        ...args, limit: 200, ...(page === undefined ? {} : { cursor: page }),
      });
      read.push(...(answer.messages ?? []));
      page = answer.response_metadata?.next_cursor || undefined;
      if (page === undefined) break;
    }
    return read.sort((a, b) => Number(a.ts) - Number(b.ts));
  }

  /** Handles each message after `after`, in order, moving the place's cursor past each one done. */
  async function readOn(place: string, after: string, messages: readonly SlackMessage[], event: (message: SlackMessage) => SlackMessageEvent): Promise<void> {
    for (const message of messages) {
      if (Number(message.ts) <= Number(after)) continue;
      await channelMessage(event(message), false);
      await inbox.advance(channelId, place, cursorAt(message.ts));
    }
  }

  /** Reads a thread where a conversation lives from its cursor; a thread never read starts after the bot's first post there, else at its latest reply. */
  function catchUpThread(thread: string): Promise<void> {
    const parsed = parseSlackAddress(thread);
    if (parsed?.kind !== 'thread') return Promise.resolve();
    const { channel, ts } = parsed;
    return enqueue(channel, async () => {
      const bot = connection.ensureOnline();
      const cursor = await inbox.cursor(channelId, thread);
      const messages = await readAfter('conversations.replies', { channel, ts, ...(cursor === null ? {} : { oldest: cursor.id }) });
      let after = cursor?.id ?? null;
      if (after === null) {
        after = messages.find((m) => m.bot_id === bot.botId)?.ts ?? messages.at(-1)?.ts ?? ts;
        await inbox.advance(channelId, thread, cursorAt(after));
      }
      await readOn(thread, after, messages, (message) => ({ ...message, channel, thread_ts: message.thread_ts ?? ts }));
      waits.delete(thread);
    }).catch((error: unknown) => readAgain(thread, error));
  }

  /** Reads a Slack channel's top-level messages (a mention there starts a thread) from its cursor; a channel never read starts at its latest message. */
  function catchUpChannel(channel: string): Promise<void> {
    return enqueue(channel, async () => {
      connection.ensureOnline();
      const cursor = await inbox.cursor(channelId, channel);
      if (cursor === null) {
        const [latest] = (await connection.call<{ messages?: SlackMessage[] }>('conversations.history', { channel, limit: 1 })).messages ?? [];
        await inbox.advance(channelId, channel, cursorAt(latest?.ts ?? (Date.now() / 1000).toFixed(6)));
        return;
      }
      const messages = await readAfter('conversations.history', { channel, oldest: cursor.id });
      // A thread's parent is a top-level message like any other here.
      await readOn(channel, cursor.id, messages, (message) => ({ ...message, channel, thread_ts: undefined }));
      waits.delete(channel);
    }).catch((error: unknown) => readAgain(channel, error));
  }

  /**
   * Reads a direct conversation with the bot from its cursor: one the bot was never sent a message in live has
   * none and is not read (nothing of it was taken and left half answered).
   */
  function catchUpDirect(im: string): Promise<void> {
    return enqueue(im, async () => {
      connection.ensureOnline();
      const cursor = await inbox.cursor(channelId, im);
      if (cursor === null) return;
      const messages = await readAfter('conversations.history', { channel: im, oldest: cursor.id });
      for (const message of messages) {
        if (Number(message.ts) <= Number(cursor.id)) continue;
        await directMessage({ ...message, channel: im, channel_type: 'im', thread_ts: undefined }, false);
        await inbox.advance(channelId, im, cursorAt(message.ts));
      }
      waits.delete(im);
    }).catch((error: unknown) => readAgain(im, error));
  }

  /**
   * Reads every thread where a conversation lives on the channel from its cursor, and each Slack channel's
   * top-level messages, in `inChannel` only when given. What cannot be listed now is listed again later.
   */
  async function catchUp(inChannel: string | null = null): Promise<void> {
    const [living, channels, directs] = await Promise.allSettled([
      options.living(),
      inChannel !== null ? Promise.resolve([{ id: inChannel }]) : options.channels(),
      inChannel !== null ? Promise.resolve([]) : options.directs(),
    ]);
    const threads = living.status === 'fulfilled'
      ? living.value.map(({ address }) => address).filter((address) => {
        const parsed = parseSlackAddress(address);
        return parsed?.kind === 'thread' && (inChannel === null || parsed.channel === inChannel);
      })
      : [];
    for (const failed of [living, channels, directs]) {
      if (failed.status === 'rejected') {
        log.warn({ err: failed.reason }, 'the slack places to read could not be listed; they are listed again');
        later(() => void catchUp(inChannel), RETRY_MS);
      }
    }
    await Promise.all([
      ...threads.map((thread) => catchUpThread(thread)),
      ...(channels.status === 'fulfilled' ? channels.value.map(({ id }) => catchUpChannel(id)) : []),
      ...(directs.status === 'fulfilled' ? directs.value.map(({ id }) => catchUpDirect(id)) : []),
    ]);
  }

  async function handle(envelope: SlackEnvelope): Promise<void> {
    if (envelope.type === 'events_api') {
      const event = (envelope.body['event'] ?? {}) as SlackMessageEvent;
      if (event.type !== 'message' && event.type !== 'app_mention') return;
      if (event.channel_type === 'im' || (event.channel ?? '').startsWith('D')) return direct(event);
      return live(event);
    }
    if (envelope.type === 'interactive') return click(envelope.body as SlackBlockActions);
  }

  const readAll = () => {
    if (!closed && connection.online) void catchUp().catch((error: unknown) => log.warn({ err: error }, 'the slack places could not be read'));
  };
  const stops = [
    connection.onEnvelope((envelope) => {
      if (closed) return;
      // Acknowledged at once, as Slack asks (within 3 s) and as a bare Bolt app does: what is not handled yet is
      // not lost (its place is read again from its cursor), and the claims make a redelivery harmless.
      void envelope.ack().catch((error: unknown) => log.warn({ err: error }, 'a slack envelope could not be acknowledged'));
      void handle(envelope).catch((error: unknown) => log.warn({ err: error, type: envelope.type }, 'a slack envelope could not be handled'));
    }),
    connection.onOnline(readAll),
  ];
  const sweep = setInterval(readAll, SWEEP_EVERY_MS);
  sweep.unref?.();
  readAll();

  return {
    /** Reads the threads where conversations live in a Slack channel, and its mentions, from their cursors now; resolves once read. */
    catchUp: (channel: string) => catchUp(channel),
    close(): void {
      closed = true;
      for (const stop of stops) stop();
      clearInterval(sweep);
      for (const timer of timers) clearTimeout(timer);
    },
  };
}

export type SlackInbound = ReturnType<typeof slackInbound>;
