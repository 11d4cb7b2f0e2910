import type { Channel, ChannelPlace } from '../../domain/model.ts';
import type { SlackSettings } from '../../domain/slack.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { ChannelUnavailableError, type ChannelListener, type ChannelPort, type DeliveryLanding } from '../../ports/channel-port.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import type { Delivery } from '../../ports/delivery-outbox.ts';
import type { Logger } from '../../ports/logger.ts';
import { SlackConnection, type Backoff } from './connection.ts';
import { deliverToSlack, type Openings } from './deliver.ts';
import { slackInbound, type SlackInbound } from './inbound.ts';
import { channelPlace, channelThreads, directChannels, memberChannels, type SlackChannelFacts } from './places.ts';

/** Slack's answers that say a channel is not the bot's to read any more. */
const GONE = /not_in_channel|channel_not_found/;

/**
 * A listing's Web API call: Slack's refusal of it (a scope missing, a token revoked) is the channel being
 * unavailable (503 `channel_unavailable`), never a 500; a channel gone is left to the caller.
 */
async function platform<T>(call: Promise<T>): Promise<T> {
  try {
    return await call;
  } catch (error) {
    const code = (error as { code?: string; data?: { error?: string } });
    if (code.code !== 'slack_webapi_platform_error' || GONE.test(code.data?.error ?? '')) throw error;
    throw new ChannelUnavailableError(`Slack refused the listing (${code.data?.error ?? 'an error'})`, { cause: error });
  }
}

/** The conversations living on a channel, by address (`<channel>:<ts>`) with their thread's title. */
export type LivingConversations = (channelId: string) => Promise<readonly { address: string; title: string }[]>;

export interface SlackChannelOptions {
  /** The world's channel id of kind `slack`. */
  readonly channelId: string;
  readonly settings: SlackSettings;
  /** The tokens, read from the variables the settings name by the caller; held by the SDK's clients only. */
  readonly appToken: string;
  readonly botToken: string;
  /** The channel's catalog entry (name, agents, linked users) comes from here. */
  readonly catalog: Catalog;
  readonly log: Logger;
  /** Where conversations live on the channel (none known without it). */
  readonly living?: LivingConversations;
  /** The bot's reconnection wait (tests shorten it). */
  readonly backoff?: Backoff;
  /** How long a message's claim holds before another instance may take it (60 s by default). */
  readonly claimMs?: number;
}

/** A slack channel's port, with its connection and closing it. */
export interface SlackChannelPort extends ChannelPort {
  readonly channelId: string;
  readonly connection: SlackConnection;
  close(): Promise<void>;
}

/**
 * One slack channel (contract section 10), served over Socket Mode by Slack's own SDK: its places are
 * the channels the bot is a member of, a channel's threads those where conversations live and its recent
 * ones; a delivery is posted in its thread once (or opens one with a top-level post). While the socket is
 * down, listings throw ChannelUnavailableError (503 `channel_unavailable`) and deliveries reject (the outbox
 * retries); `channels()` keeps answering from what was last listed.
 */
export function slackChannelPort(options: SlackChannelOptions): SlackChannelPort {
  const { channelId, catalog } = options;
  const connection = new SlackConnection({
    appToken: options.appToken, botToken: options.botToken, apiUrl: options.settings.api_url, log: options.log,
    ...(options.backoff === undefined ? {} : { backoff: options.backoff }),
  });
  const living = options.living ?? (async () => []);
  let listed: SlackChannelFacts[] = [];
  const threads = new Map<string, ChannelPlace[]>();
  const inFlight = new Map<string, Promise<DeliveryLanding | void>>();
  /** The last post asked in each thread (by address), settled either way: the next one waits for it. */
  const inThread = new Map<string, Promise<void>>();
  const openings: Openings = new Map();
  let inbound: SlackInbound | null = null;

  const top = (): ChannelPlace[] => listed.map((facts) => channelPlace(facts, threads.get(facts.id) ?? []));

  async function listChannels(): Promise<ChannelPlace[]> {
    connection.ensureOnline();
    listed = await platform(memberChannels(connection));
    return top();
  }

  async function listThreads(channel: string): Promise<ChannelPlace[] | null> {
    connection.ensureOnline();
    if (!listed.some((c) => c.id === channel)) await listChannels();
    const facts = listed.find((c) => c.id === channel);
    if (facts === undefined) return null;
    try {
      const places = await platform(channelThreads(connection, facts, await living(channelId)));
      threads.set(channel, places);
      return places;
    } catch (error) {
      // The bot left the channel (or it went) since it was listed: it opens nothing now.
      if (!GONE.test(String((error as { data?: { error?: string } }).data?.error ?? ''))) throw error;
      await listChannels();
      return null;
    }
  }

  return {
    channelId,
    connection,
    async channels(): Promise<Channel[]> {
      const entry = (await catalog.channels()).find((c) => c.id === channelId);
      return entry === undefined ? [] : [{ ...entry, addresses: top() }];
    },
    async places(id, inside) {
      if (id !== channelId) return null;
      return inside === null ? listChannels() : listThreads(inside);
    },
    deliver(delivery: Delivery) {
      // One post at a time per delivery: a second ask while the first is under way waits for it.
      const running = inFlight.get(delivery.id);
      if (running !== undefined) return running;
      // One thread's posts one after the other, in the order asked: a post waiting out a 429 is not overtaken.
      const thread = delivery.address.id;
      const before = inThread.get(thread) ?? Promise.resolve();
      const posted = before.then(() => deliverToSlack(connection, delivery, openings)).finally(() => inFlight.delete(delivery.id));
      const settled = posted.then(() => {}, () => {});
      inThread.set(thread, settled);
      void settled.then(() => {
        if (inThread.get(thread) === settled) inThread.delete(thread);
      });
      inFlight.set(delivery.id, posted);
      return posted;
    },
    listen(handlers: ChatHandlers): ChannelListener {
      if (inbound !== null) throw new Error(`the slack channel ${channelId} listens already`);
      const listening = slackInbound({
        channelId, connection, handlers, living: () => living(channelId), channels: () => memberChannels(connection), directs: () => directChannels(connection), log: options.log, ...(options.claimMs === undefined ? {} : { claimMs: options.claimMs }),
      });
      inbound = listening;
      return {
        catchUp: (id, place) => (id === channelId ? listening.catchUp(place) : Promise.resolve()),
        close() {
          listening.close();
          if (inbound === listening) inbound = null;
        },
      };
    },
    async close() {
      inbound?.close();
      await connection.close();
    },
  };
}

/** Starts the port's connection (kept apart so a test can build it, then start it). */
export function startSlackChannel(port: SlackChannelPort): SlackChannelPort {
  port.connection.start();
  return port;
}
