import { parseSlackAddress, slackThreadAddress } from '../../domain/slack.ts';
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

/** A message that could not be handled (storage away, claimed elsewhere and not done) is tried again after this long. */
const RETRY_MS = 5_000;
/** At most this many pages (200 replies each) are read in one catch-up of a thread. */
const CATCH_UP_PAGES = 25;

/** A message claimed by another listener and not done: the thread's cursor stays before it. */
class HeldElsewhere extends Error {
  override readonly name = 'HeldElsewhere';
}

/**
 * The inbound side of a slack channel (contract section 10): every Socket Mode envelope is acknowledged
 * as it arrives; people's messages are read into the chat-inbound
 * protocol's terms and handed to it (claimed once across instances, redeliveries and reconnects by
 * `<channel>:<ts>`), one at a time per Slack channel; a click on an ask's button answers it (the message
 * then says who chose what) or is refused to the clicker alone; a direct message links or gets the help
 * text. On every (re)connect each thread where a conversation lives is read with `conversations.replies`
 * from its cursor, so nothing posted while the socket was down is lost.
 */
export function slackInbound(options: {
  readonly channelId: string;
  readonly connection: SlackConnection;
  readonly handlers: ChatHandlers;
  /** The conversations living on the channel (their addresses): the threads read on reconnect. */
  readonly living: () => Promise<readonly { address: string }[]>;
  /** The Slack channels the bot is a member of: their mentions are read again on reconnect. */
  readonly channels: () => Promise<readonly { id: string }[]>;
  readonly log: Logger;
  readonly claimMs?: number;
}) {
  const { channelId, connection, handlers, log } = options;
  const { inbox } = handlers;
  const chat = handlers.session({ ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }), help: SLACK_HELP });
  /** Each Slack channel's work, one message at a time, in order. */
  const chains = new Map<string, Promise<void>>();
  /** Threads where a message failed: their cursor stays until a catch-up reads past it. */
  const dirty = new Set<string>();
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

  /** Moves a thread's cursor to `ts` when it is later than where it stands (and no message before it failed). */
  async function advance(thread: string, ts: string): Promise<void> {
    if (dirty.has(thread)) return;
    const cursor = await inbox.cursor(channelId, thread);
    if (cursor === null || Number(cursor.id) < Number(ts)) await inbox.advance(channelId, thread, { id: ts, at: new Date(Number(ts) * 1000).toISOString() });
  }

  /** Hands a message in a channel to the protocol; throws when it must be read again (held elsewhere, storage away). */
  async function channelMessage(event: SlackMessageEvent): Promise<void> {
    const bot = connection.bot;
    if (bot === null) throw new Error('the bot is not known yet');
    const read = readMessage(channelId, bot.userId, event);
    if (read.kind !== 'room') return;
    // A channel's own chatter (not in a thread, not to the bot): nothing could take it, nothing is claimed.
    if (read.thread === null && read.message.opens === null) return advanceChannel(event.channel!, read.ts);
    // At or before where its place was read to: handled already, or from before the bot listened there (an
    // envelope Slack kept while the app was away, redelivered now): not anyone's directive now.
    const place = read.thread === null ? event.channel! : slackThreadAddress(event.channel!, read.thread);
    const cursor = await inbox.cursor(channelId, place);
    if (cursor !== null && Number(read.ts) <= Number(cursor.id) && !dirty.has(place)) return;
    const handled = await chat.message(read.message, read.placing);
    if (handled.kind === 'held') throw new HeldElsewhere(read.message.id);
    if (handled.kind === 'handled') log.info({ message: read.message.id, outcome: handled.outcome }, 'slack message handled');
    if (read.thread !== null) await advance(slackThreadAddress(event.channel!, read.thread), read.ts);
    else await advanceChannel(event.channel!, read.ts);
  }

  /** Moves a Slack channel's cursor (its top-level messages: where mentions start threads) to `ts` when later. */
  async function advanceChannel(channel: string, ts: string): Promise<void> {
    if (dirty.has(channel)) return;
    const cursor = await inbox.cursor(channelId, channel);
    if (cursor === null || Number(cursor.id) < Number(ts)) await inbox.advance(channelId, channel, { id: ts, at: new Date(Number(ts) * 1000).toISOString() });
  }

  /** A live message: in its channel's order; on failure tried again later, and its thread read again from its cursor. */
  function live(event: SlackMessageEvent): Promise<void> {
    const channel = event.channel ?? '';
    return enqueue(channel, () => channelMessage(event)).catch((error: unknown) => {
      if (closed) return;
      const thread = event.thread_ts === undefined ? null : slackThreadAddress(channel, event.thread_ts);
      if (error instanceof HeldElsewhere) log.info({ message: error.message }, 'a slack message is claimed and not done yet; it is read again');
      else log.warn({ err: error, channel }, 'a slack message could not be handled; it is read again');
      if (thread !== null) {
        dirty.add(thread);
        later(() => void catchUpThread(thread), RETRY_MS);
      } else {
        dirty.add(channel);
        later(() => void catchUpChannel(channel), RETRY_MS);
      }
    });
  }

  async function direct(event: SlackMessageEvent): Promise<void> {
    const bot = connection.bot;
    if (bot === null) return;
    const read = readMessage(channelId, bot.userId, event);
    if (read.kind !== 'direct') return;
    const handled = await chat.direct({ channel: channelId, sender: read.sender, text: read.text, id: read.id }, async (reply) => {
      await connection.call('chat.postMessage', { channel: read.im, text: escapeMrkdwn(reply) });
    });
    // Never the text: the code links an account until it is used or expires.
    if (handled === 'link') log.info({ from: read.sender }, 'slack link code received');
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

  /**
   * Reads a thread's replies after its cursor, each through the same path as a live message. A thread never
   * read starts after the bot's first post there (the conversation landed with it), else at its latest reply.
   */
  function catchUpThread(thread: string): Promise<void> {
    const parsed = parseSlackAddress(thread);
    if (parsed?.kind !== 'thread') return Promise.resolve();
    const { channel, ts } = parsed;
    return enqueue(channel, async () => {
      const bot = connection.ensureOnline();
      const cursor = await inbox.cursor(channelId, thread);
      let after = cursor === null ? null : cursor.id;
      let page: string | undefined;
      for (let pages = 0; pages < CATCH_UP_PAGES; pages++) {
        const answer = await connection.call<{ messages?: SlackMessage[]; response_metadata?: { next_cursor?: string } }>('conversations.replies', {
          channel, ts, limit: 200, ...(after === null ? {} : { oldest: after }), ...(page === undefined ? {} : { cursor: page }),
        });
        const messages = answer.messages ?? [];
        if (after === null) {
          // Never read: from the bot's first post on (what came before was not said to the agent), else from now.
          const landed = messages.find((m) => m.bot_id === bot.botId);
          const start = landed?.ts ?? messages.at(-1)?.ts ?? ts;
          await inbox.advance(channelId, thread, { id: start, at: new Date(Number(start) * 1000).toISOString() });
          after = start;
        }
        for (const message of messages) {
          if (Number(message.ts) <= Number(after)) continue;
          await channelMessage({ ...message, channel, thread_ts: message.thread_ts ?? ts });
          await inbox.advance(channelId, thread, { id: message.ts, at: new Date(Number(message.ts) * 1000).toISOString() });
        }
        page = answer.response_metadata?.next_cursor || undefined;
        if (page === undefined) break;
      }
      dirty.delete(thread);
    }).catch((error: unknown) => {
      if (closed) return;
      if (error instanceof HeldElsewhere) log.info({ thread }, 'a slack message is claimed and not done yet; the thread is read again');
      else log.warn({ err: error, thread }, 'a slack thread could not be read; it is read again');
      dirty.add(thread);
      later(() => void catchUpThread(thread), RETRY_MS);
    });
  }

  /**
   * Reads a Slack channel's top-level messages after its cursor (a mention there starts a thread), each
   * through the same path as a live one. A channel never read starts at its latest message.
   */
  function catchUpChannel(channel: string): Promise<void> {
    return enqueue(channel, async () => {
      connection.ensureOnline();
      const cursor = await inbox.cursor(channelId, channel);
      if (cursor === null) {
        const [latest] = (await connection.call<{ messages?: SlackMessage[] }>('conversations.history', { channel, limit: 1 })).messages ?? [];
        const start = latest?.ts ?? (Date.now() / 1000).toFixed(6);
        await inbox.advance(channelId, channel, { id: start, at: new Date(Number(start) * 1000).toISOString() });
        dirty.delete(channel);
        return;
      }
      let page: string | undefined;
      const read: SlackMessage[] = [];
      for (let pages = 0; pages < CATCH_UP_PAGES; pages++) {
        const answer = await connection.call<{ messages?: SlackMessage[]; response_metadata?: { next_cursor?: string } }>('conversations.history', {
          channel, limit: 200, oldest: cursor.id, ...(page === undefined ? {} : { cursor: page }),
        });
        read.push(...(answer.messages ?? []));
        page = answer.response_metadata?.next_cursor || undefined;
        if (page === undefined) break;
      }
      // Newest first from Slack: handled oldest first.
      dirty.delete(channel);
      for (const message of read.filter((m) => Number(m.ts) > Number(cursor.id)).sort((a, b) => Number(a.ts) - Number(b.ts))) {
        await channelMessage({ ...message, channel, thread_ts: undefined });
      }
    }).catch((error: unknown) => {
      if (closed) return;
      log.warn({ err: error, channel }, 'a slack channel could not be read; it is read again');
      dirty.add(channel);
      later(() => void catchUpChannel(channel), RETRY_MS);
    });
  }

  /**
   * Reads every thread where a conversation lives on the channel from its cursor, and each Slack channel's
   * top-level messages (for mentions), in `inChannel` only when given.
   */
  async function catchUp(inChannel: string | null = null): Promise<void> {
    const threads = (await options.living()).map(({ address }) => address).filter((address) => {
      const parsed = parseSlackAddress(address);
      return parsed?.kind === 'thread' && (inChannel === null || parsed.channel === inChannel);
    });
    const channels = inChannel !== null ? [inChannel] : (await options.channels()).map((c) => c.id);
    await Promise.all([...threads.map((thread) => catchUpThread(thread)), ...channels.map((channel) => catchUpChannel(channel))]);
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

  const stops = [
    connection.onEnvelope((envelope) => {
      if (closed) return;
      // Acknowledged at once, as Slack asks (within 3 s) and as a bare Bolt app does: what is not handled yet is
      // not lost (a failure is tried again; a thread, and a channel's mentions, are read again from their cursors
      // on every reconnect and after a restart), and the claims make a redelivery harmless.
      void envelope.ack().catch((error: unknown) => log.warn({ err: error }, 'a slack envelope could not be acknowledged'));
      void handle(envelope).catch((error: unknown) => log.warn({ err: error, type: envelope.type }, 'a slack envelope could not be handled'));
    }),
    connection.onOnline(() => {
      if (!closed) void catchUp().catch((error: unknown) => log.warn({ err: error }, 'the slack threads where conversations live could not be read'));
    }),
  ];
  if (connection.online) void catchUp().catch((error: unknown) => log.warn({ err: error }, 'the slack threads where conversations live could not be read'));

  return {
    /** Reads the threads where conversations live in a Slack channel from their cursors now; resolves once read. */
    catchUp: (channel: string) => catchUp(channel),
    close(): void {
      closed = true;
      for (const stop of stops) stop();
      for (const timer of timers) clearTimeout(timer);
    },
  };
}

export type SlackInbound = ReturnType<typeof slackInbound>;
