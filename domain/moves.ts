/**
 * Moves: teleport (a conversation to a place on another channel) and summon (another agent in place),
 * what each can do now and what keeps a conversation from moving. The spec calls their availability
 * "operations" (`GET /threads/{id}/operations`, `ThreadOperations`); the house says move.
 */
import { ERROR_DETAILS, type Failure } from './errors.ts';
import { CONSOLE_CHANNEL, type Address, type Channel, type ChannelPlace, type MovedTo } from './model.ts';
import { channelRoutes, type OfferedAgent, type RouteInfo } from './vocabulary.ts';
import { roomThreadAddress, XMPP_KIND } from './xmpp.ts';

/** A destination on a channel (spec: ChannelAddress). */
export interface ChannelAddress {
  readonly channel: string;
  readonly id: string;
  readonly shared: boolean;
  readonly metadata: { readonly name: string; readonly inside?: string; readonly barred?: string };
}

/** What one operation can do now (spec: OperationAvailability). */
export interface OperationAvailability {
  readonly destinations: readonly ChannelAddress[];
  readonly here: ChannelAddress | null;
  readonly routes: Readonly<Record<string, readonly RouteInfo[]>>;
  readonly reason: string | null;
}

/** Teleport and summon for a thread (spec: ThreadOperations). */
export interface ThreadOperations {
  readonly source: ChannelAddress | null;
  readonly teleport: OperationAvailability;
  readonly summon: OperationAvailability;
  readonly barred: Readonly<Record<string, string>>;
}

/** What keeps a conversation from moving: a turn, approvals or questions waiting, directives queued. */
export interface Busy {
  readonly turnRunning: boolean;
  readonly approvals: number;
  readonly questions: number;
  readonly queued: number;
}

/** Everything the rules look at. */
export interface OperationsInput {
  readonly userId: string;
  readonly thread: { readonly id: string; readonly channel: string; readonly title: string };
  /** The conversation that would move (the thread's latest), or null. */
  readonly conversation: { readonly agent: string; readonly address: Address | null; readonly moved_to: MovedTo | null } | null;
  readonly channels: readonly Channel[];
  /** The agents whose offer is known, with their vocabularies in force. */
  readonly agents: readonly OfferedAgent[];
  readonly busy: Busy;
}

/** The one teleport destination the console channel offers: a new console thread. */
export const NEW_CONSOLE_THREAD: ChannelAddress = Object.freeze({
  channel: CONSOLE_CHANNEL, id: 'new', shared: false, metadata: Object.freeze({ name: 'New console thread' }),
});

/** Why a conversation cannot move now, or null. */
export function busyReason(busy: Busy): string | null {
  const failure = busyFailure(busy);
  return failure === null ? null : failureText(failure);
}

/** A failure's words: its detail, else its code's sentence. */
export const failureText = (failure: Failure): string => failure.detail ?? ERROR_DETAILS[failure.code];

/**
 * The refusal of a busy thread, with its own code (a queue, a turn, approvals, questions), or null
 * when it is not busy. A queue comes first: the end of the running turn does not free the thread then.
 */
export function busyFailure(busy: Busy): Failure | null {
  if (busy.queued > 0) return { code: 'queue_not_empty' };
  if (busy.turnRunning) return { code: 'turn_running' };
  if (busy.approvals > 0) return { code: 'approvals_pending' };
  if (busy.questions > 0) return { code: 'questions_pending' };
  return null;
}

/** Why no conversation can land on a channel for this user, with its code, or null when one can. */
export function barredFailure(userId: string, channel: Channel): Failure | null {
  if (!channel.linked_users.includes(userId)) return { code: 'channel_not_linked' };
  if (channel.agents.length === 0) return { code: 'agent_not_on_channel', detail: 'No agent is connected to this channel' };
  return null;
}

/** Why a conversation that moved away cannot be moved (or continued) from here: it names where it is now. */
export function movedReason(moved: MovedTo): string {
  return `The conversation moved to ${moved.address.channel} ${moved.address.id} (thread ${moved.thread_id}); move it from there`;
}

/**
 * Whether a place is a thread of the channel (it lies inside another place, as a chat thread inside its
 * room): a teleport with `new_thread: false` lands in such a place itself; a room takes new threads only.
 */
export function isThreadPlace(places: readonly ChannelPlace[], id: string, depth = 0): boolean {
  for (const place of places) {
    if (place.id === id) return depth > 0;
    if (isThreadPlace(place.children, id, depth + 1)) return true;
  }
  return false;
}

/** Channels where no conversation can land, with the reason: not linked to the user, or no agent connected. */
export function barredChannels(userId: string, channels: readonly Channel[]): Record<string, string> {
  const barred: Record<string, string> = {};
  for (const channel of channels) {
    const failure = barredFailure(userId, channel);
    if (failure !== null) barred[channel.id] = failureText(failure);
  }
  return barred;
}

/** A place of a channel's tree by id, at any depth. */
export function findPlace(places: readonly ChannelPlace[], id: string): ChannelPlace | null {
  for (const place of places) {
    if (place.id === id) return place;
    const inner = findPlace(place.children, id);
    if (inner !== null) return inner;
  }
  return null;
}

/** One level of a channel's destinations: the top when `inside` is null, else the children of the place opened by it. */
export function placesInside(channel: Channel, inside: string | null): readonly ChannelPlace[] | null {
  if (inside === null) return channel.addresses;
  const open = (places: readonly ChannelPlace[]): ChannelPlace | null => {
    for (const place of places) {
      if (place.inside === inside) return place;
      const inner = open(place.children);
      if (inner !== null) return inner;
    }
    return null;
  };
  return open(channel.addresses)?.children ?? null;
}

/**
 * The address of a new thread opened at a place by a delivery, decided from the delivery's id when
 * the move is written: `<room jid>#<delivery id>` on an xmpp channel (the id is its XEP-0201 thread),
 * `<place>/<delivery id>` on others.
 */
export function newThreadAddress(channel: Pick<Channel, 'kind'>, place: string, deliveryId: string): string {
  return channel.kind === XMPP_KIND ? roomThreadAddress(place, deliveryId) : `${place}/${deliveryId}`;
}

/** A place as a ChannelAddress row. */
export function placeAddress(channel: Channel, place: ChannelPlace): ChannelAddress {
  const metadata: { name: string; inside?: string; barred?: string } = { name: place.name };
  if (place.inside !== null) metadata.inside = place.inside;
  if (place.barred !== null) metadata.barred = place.barred;
  return { channel: channel.id, id: place.id, shared: place.shared, metadata };
}

/** The surface the conversation is on: its address on its thread's channel, or the thread itself. */
export function sourceAddress(input: OperationsInput): ChannelAddress | null {
  const address = input.conversation?.address ?? { channel: input.thread.channel, id: input.thread.id };
  const channel = input.channels.find((c) => c.id === address.channel);
  if (channel === undefined) return null;
  const place = findPlace(channel.addresses, address.id);
  return place !== null ? placeAddress(channel, place) : { channel: channel.id, id: address.id, shared: channel.shared, metadata: { name: input.thread.title } };
}

/** The routes of one agent on a channel (teleport keeps the conversation's agent). */
export const agentRoutesOn = (channel: Channel, agents: readonly OfferedAgent[], agent: string): RouteInfo[] =>
  channelRoutes(channel, agents).filter((route) => route.agent === agent);

/**
 * The availability rules: teleport offers, on every channel not barred, the conversation's own
 * agent's routes (a channel where it has none cannot be the destination), and suggests a new console
 * thread (for a thread elsewhere) and the top-level places of other channels; summon offers every
 * other agent on the conversation's own channel, here where it is. Both carry the reason a busy
 * thread cannot move.
 */
export function threadOperations(input: OperationsInput): ThreadOperations {
  const barred = barredChannels(input.userId, input.channels);
  const source = sourceAddress(input);
  const moved = input.conversation?.moved_to ?? null;
  const reason = moved !== null ? movedReason(moved) : busyReason(input.busy);
  const open = input.channels.filter((channel) => barred[channel.id] === undefined);
  const agent = input.conversation?.agent ?? null;

  const teleportRoutes: Record<string, RouteInfo[]> = {};
  const destinations: ChannelAddress[] = [];
  for (const channel of open) {
    const routes = agent === null ? [] : agentRoutesOn(channel, input.agents, agent);
    teleportRoutes[channel.id] = routes;
    if (routes.length === 0) continue;
    if (channel.id === CONSOLE_CHANNEL) {
      if (input.thread.channel !== CONSOLE_CHANNEL) destinations.push(NEW_CONSOLE_THREAD);
    } else if (channel.id !== input.thread.channel) {
      for (const place of channel.addresses) if (place.barred === null) destinations.push(placeAddress(channel, place));
    }
  }

  const own = source === null ? undefined : open.find((channel) => channel.id === source.channel);
  const summonRoutes: Record<string, RouteInfo[]> =
    own === undefined || agent === null ? {} : { [own.id]: channelRoutes(own, input.agents).filter((route) => route.agent !== agent) };

  return {
    source,
    teleport: { destinations, here: null, routes: teleportRoutes, reason },
    summon: { destinations: [], here: source, routes: summonRoutes, reason },
    barred,
  };
}
