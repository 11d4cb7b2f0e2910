import { uuid7Time } from '../../domain/vocabulary.ts';
import { parseSlackAddress, slackThreadAddress } from '../../domain/slack.ts';
import type { DeliveryLanding } from '../../ports/channel-port.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import { askBlocks, textBlocks } from './blocks.ts';
import type { SlackConnection } from './connection.ts';
import { escapeMrkdwn, mrkdwnFromMarkdown } from './mrkdwn.ts';
import type { SlackMessage } from './places.ts';

/** The metadata event type every post of the service carries, with its delivery id (contract section 10). */
export const DELIVERY_EVENT = 'console_delivery';

/** How far before its id's time a delivery's post is looked for (clocks of the service and Slack differ). */
const CLOCK_SLACK_MS = 10 * 60_000;
/** How far back the post of a delivery whose id carries no time (a derived reply id) is looked for. */
const UNTIMED_SEARCH_MS = 60 * 60_000;
/** At most this many pages (200 messages each) are searched for a post already made. */
const SEARCH_PAGES = 10;

/** The thread each delivery opened with its top-level post, as this instance saw it (a cache: Slack's history says it too). */
export type Openings = Map<string, string>;

/** The parts of a delivery a message carries, when it is one of the service's posts of that delivery. */
function postedPart(message: SlackMessage, deliveryId: string): number | null {
  const meta = message.metadata;
  if (meta?.event_type !== DELIVERY_EVENT || meta.event_payload?.['delivery_id'] !== deliveryId) return null;
  const part = meta.event_payload['part'];
  return typeof part === 'number' ? part : 0;
}

/** From when a delivery's post is looked for, as a Slack `oldest` (seconds). */
function since(id: string): string {
  const timed = id.length === 36 && id[14] === '7';
  const from = (timed ? Date.parse(uuid7Time(id)) : Date.now() - UNTIMED_SEARCH_MS) - CLOCK_SLACK_MS;
  return (Math.max(0, from) / 1000).toFixed(6);
}

/** Pages through a history method (`conversations.history` or `.replies`), with metadata, from `oldest`. */
async function* pages(connection: SlackConnection, method: string, args: Record<string, unknown>): AsyncGenerator<SlackMessage[]> {
  let cursor: string | undefined;
  for (let page = 0; page < SEARCH_PAGES; page++) {
    const answer = await connection.call<{ messages?: SlackMessage[]; response_metadata?: { next_cursor?: string } }>(method, {
      ...args, include_all_metadata: true, limit: 200, ...(cursor === undefined ? {} : { cursor }),
    });
    yield answer.messages ?? [];
    cursor = answer.response_metadata?.next_cursor || undefined;
    if (cursor === undefined) return;
  }
}

/** The parts of the delivery the thread already carries (a retry after a post whose answer was lost posts them not again). */
async function postedParts(connection: SlackConnection, channel: string, threadTs: string, deliveryId: string): Promise<Set<number>> {
  const parts = new Set<number>();
  for await (const messages of pages(connection, 'conversations.replies', { channel, ts: threadTs, oldest: since(deliveryId) })) {
    for (const message of messages) {
      const part = postedPart(message, deliveryId);
      if (part !== null) parts.add(part);
    }
  }
  return parts;
}

/** The `ts` of the top-level post that opened a thread for `openingId`, or null when none was posted. */
async function openedThread(connection: SlackConnection, channel: string, openingId: string, openings: Openings): Promise<string | null> {
  const known = openings.get(openingId);
  if (known !== undefined) return known;
  for await (const messages of pages(connection, 'conversations.history', { channel, oldest: since(openingId) })) {
    const found = messages.find((message) => postedPart(message, openingId) !== null && (message.thread_ts === undefined || message.thread_ts === message.ts));
    if (found !== undefined) {
      openings.set(openingId, found.ts);
      return found.ts;
    }
  }
  return null;
}

/** The messages a delivery is posted as: an ask's blocks with its buttons, or its text as mrkdwn sections (50 blocks a message at most). */
function messagesOf(delivery: Delivery, head: string | null): { text: string; blocks: unknown[] }[] {
  if (delivery.ask !== undefined && delivery.ask !== null) {
    const { blocks, text } = askBlocks(delivery.ask, delivery.text);
    return [{ text, blocks }];
  }
  const mrkdwn = (head === null ? '' : `${head}\n\n`) + mrkdwnFromMarkdown(delivery.text);
  const messages = textBlocks(mrkdwn);
  // Nothing to say (an empty text): one message all the same, so a thread still opens and the delivery is taken.
  if (messages.length === 0) return [{ text: '(no text)', blocks: [] }];
  return messages.map((blocks) => ({
    blocks,
    // The notification's text: what the sections say, cut to fit.
    text: blocks.map((block) => ((block as { text?: { text?: string } }).text?.text ?? '')).join('\n').slice(0, 3_000),
  }));
}

/** Posts the delivery's messages not posted yet, each with its metadata; answers the first message's `ts`. */
async function post(connection: SlackConnection, channel: string, threadTs: string | null, delivery: Delivery, head: string | null, done: ReadonlySet<number>): Promise<string | null> {
  let first: string | null = null;
  const messages = messagesOf(delivery, head);
  for (const [part, message] of messages.entries()) {
    if (done.has(part)) continue;
    const answer = await connection.call<{ ts?: string }>('chat.postMessage', {
      channel, text: message.text, blocks: message.blocks, unfurl_links: false, unfurl_media: false,
      ...(threadTs === null ? {} : { thread_ts: threadTs }),
      metadata: { event_type: DELIVERY_EVENT, event_payload: { delivery_id: delivery.id, part } },
    });
    first ??= answer.ts ?? null;
    // A new thread opens with its first message: the rest go in it.
    if (threadTs === null && first !== null) threadTs = first;
  }
  return first;
}

/**
 * Posts a delivery in its Slack thread, at most once (contract section 10): every message carries
 * `metadata {event_type: console_delivery, event_payload: {delivery_id, part}}`, and the thread's replies are
 * searched for them first (unless the outbox hands it over for the first time), so a retry after a post whose
 * answer was lost posts nothing more. A delivery that
 * opens a thread (its address `<channel>/<delivery id>`, decided by the move) posts a top-level message
 * naming the conversation, and answers the thread's address (`<channel>:<ts>`) as where it landed; a later
 * post to that provisional address goes in that thread. A post for one person (`to`) is an ephemeral
 * message. Rejects when Slack cannot be reached or refuses (the outbox asks again).
 */
export async function deliverToSlack(connection: SlackConnection, delivery: Delivery, openings: Openings): Promise<DeliveryLanding | void> {
  const target = parseSlackAddress(delivery.address.id);
  if (target === null || target.kind === 'channel') throw new Error(`the address ${delivery.address.id} names no Slack thread (<channel>:<ts>)`);
  const { channel } = target;
  // The opening post landed here before (its answer late): where it landed is known without Slack.
  const known = target.kind === 'opening' && delivery.id === target.delivery ? openings.get(delivery.id) : undefined;
  if (known !== undefined) return { address: { channel: delivery.channel, id: slackThreadAddress(channel, known) } };
  connection.ensureOnline();
  let threadTs: string;
  let landing: DeliveryLanding | undefined;
  if (target.kind === 'opening') {
    const first = delivery.handed_before === false && delivery.id === target.delivery;
    const opened = first ? null : await openedThread(connection, channel, target.delivery, openings);
    if (opened === null) {
      if (delivery.id !== target.delivery) throw new Error(`the thread of ${delivery.address.id} is not opened yet`);
      const head = delivery.title.trim() === '' ? null : `*${escapeMrkdwn(delivery.title.replace(/\s+/g, ' ').trim().slice(0, 200))}*`;
      const ts = await post(connection, channel, null, delivery, head, new Set());
      if (ts === null) throw new Error('Slack answered the post without its ts');
      openings.set(delivery.id, ts);
      return { address: { channel: delivery.channel, id: slackThreadAddress(channel, ts) } };
    }
    threadTs = opened;
    landing = { address: { channel: delivery.channel, id: slackThreadAddress(channel, opened) } };
    // The opening delivery asked again: its top-level post is there (its later parts are checked below).
    if (delivery.id === target.delivery) {
      const done = await postedParts(connection, channel, opened, delivery.id);
      await post(connection, channel, opened, delivery, null, new Set([...done, 0]));
      return landing;
    }
  } else {
    threadTs = target.ts;
  }
  if (delivery.to !== undefined && delivery.to !== null) {
    await connection.call('chat.postEphemeral', { channel, user: delivery.to, thread_ts: threadTs, text: escapeMrkdwn(delivery.text) });
    return landing;
  }
  // Handed over for the first time (the outbox says so): nothing of it can be in the thread yet, and a long
  // thread is not read for it. Else (or not told) its parts already there are looked for.
  const done = delivery.handed_before === false ? new Set<number>() : await postedParts(connection, channel, threadTs, delivery.id);
  await post(connection, channel, threadTs, delivery, null, done);
  return landing;
}
