import type { Agent, Channel } from './model.ts';

/** What an agent advertised on a session of its own: its modes (and the one a session starts in), models and efforts. */
export interface AgentOffer {
  readonly modes: readonly string[];
  /** The mode a new session starts in; null when the agent has no modes. */
  readonly currentMode: string | null;
  readonly models: readonly string[];
  readonly efforts: readonly string[];
  /** The agent takes messages into a running turn (`_meta.steering.supported` in its `initialize` answer); absent: no. */
  readonly steering?: boolean;
}

/**
 * What is known of an agent's offer: what it advertised (possibly learned from a process that has
 * since ended), why it is unavailable (its last probe failed or did not answer in time: a sentence of
 * the service's own, never the agent's text), or nothing yet (it has not answered its first probe).
 */
export type AgentOfferState =
  | { readonly kind: 'offered'; readonly offer: AgentOffer }
  | { readonly kind: 'unavailable'; readonly reason: string }
  | { readonly kind: 'unknown' };

/** An agent's vocabularies in force: what it offers, narrowed by its world entry. */
export interface OfferedAgent {
  readonly id: string;
  readonly models: readonly string[];
  readonly efforts: readonly string[];
  readonly permission_modes: readonly string[];
  /** Null only when the agent offers no mode at all. */
  readonly default_permission_mode: string | null;
  /** A directive with `when_busy: "steer"` may go into its running turn (contract section 11). */
  readonly steering: boolean;
}

/** A world list narrows what is offered (in the world's order); null narrows nothing (the agent's order). */
const narrow = (world: readonly string[] | null, offered: readonly string[]): string[] =>
  world === null ? [...offered] : world.filter((value) => offered.includes(value));

/**
 * The vocabularies an agent really has: each list is the agent's own, narrowed to the world's when
 * the world gives one (never widened: a value the agent does not advertise is not offered, even if
 * the world names it). The default mode is the world's when it is offered, else the mode a new
 * session starts in when that is offered, else the first mode offered.
 */
export function offeredAgent(agent: Agent, offer: AgentOffer): OfferedAgent {
  const modes = narrow(agent.permission_modes, offer.modes);
  const preferred = [agent.default_permission_mode, offer.currentMode].find((mode) => mode !== null && modes.includes(mode));
  return {
    id: agent.id,
    models: narrow(agent.models, offer.models),
    efforts: narrow(agent.efforts, offer.efforts),
    permission_modes: modes,
    default_permission_mode: preferred ?? modes[0] ?? null,
    steering: offer.steering === true,
  };
}

/** A route a directive may name: an agent and one of its models (`agent:model`). */
export interface RouteInfo {
  readonly id: string;
  readonly agent: string;
  readonly model: string | null;
}

/**
 * An agent's approval postures, its default and its efforts, as GET /permissions answers them; an
 * unavailable agent offers nothing and says why.
 */
export interface AgentPostures {
  readonly agent: string;
  readonly modes: readonly string[];
  readonly default: string | null;
  readonly efforts: readonly string[];
  /** Why the agent is unavailable; null when it offers. */
  readonly unavailable: string | null;
  /** Whether it takes messages into a running turn (`when_busy: "steer"`); false when unavailable. */
  readonly steering: boolean;
}

/** The route id of an agent and model; an agent with no models has one route named by the agent alone. */
export const routeId = (agent: string, model: string | null): string => (model === null ? agent : `${agent}:${model}`);

/** The routes of a channel: each of its agents (those whose offer is known) with each of its models. */
export function channelRoutes(channel: Channel, agents: readonly OfferedAgent[]): RouteInfo[] {
  const routes: RouteInfo[] = [];
  for (const agentId of channel.agents) {
    const agent = agents.find((candidate) => candidate.id === agentId);
    if (agent === undefined) continue;
    if (agent.models.length === 0) routes.push({ id: routeId(agent.id, null), agent: agent.id, model: null });
    for (const model of agent.models) routes.push({ id: routeId(agent.id, model), agent: agent.id, model });
  }
  return routes;
}

/** Finds a route by id among a channel's routes; null when it is not offered. */
export function findRoute(routes: readonly RouteInfo[], id: string): RouteInfo | null {
  return routes.find((route) => route.id === id) ?? null;
}

/** What is known of one agent's vocabularies: what it offers, or why it is unavailable (neither: nothing known yet). */
export interface AgentStanding {
  readonly id: string;
  readonly offered: OfferedAgent | null;
  readonly unavailable: string | null;
}

/** The postures of every agent that offers or is unavailable; one of which nothing is known yet is left out. */
export const agentPostures = (agents: readonly AgentStanding[]): AgentPostures[] =>
  agents.flatMap(({ id, offered, unavailable }): AgentPostures[] => {
    if (offered !== null) {
      return [{ agent: id, modes: offered.permission_modes, default: offered.default_permission_mode, efforts: offered.efforts, unavailable: null, steering: offered.steering }];
    }
    return unavailable === null ? [] : [{ agent: id, modes: [], default: null, efforts: [], unavailable, steering: false }];
  });

/** A route id as the agent among `agents` it names and its model (null: the agent alone), or null when it names none of them. */
export function routeOf(route: string, agents: readonly string[]): { readonly agent: string; readonly model: string | null } | null {
  const agent = agents.find((id) => routeNamesAgent(route, id));
  return agent === undefined ? null : { agent, model: route === agent ? null : route.slice(agent.length + 1) };
}

/** Whether a route id names an agent: the agent alone, or `agent:model`. */
export const routeNamesAgent = (route: string, agent: string): boolean => route === agent || route.startsWith(`${agent}:`);

/** Whether a posture belongs to an agent's vocabulary. */
export const isPostureOf = (agent: OfferedAgent, mode: string): boolean => agent.permission_modes.includes(mode);

/** Whether an effort level is advertised by an agent. */
export const isEffortOf = (agent: OfferedAgent, effort: string): boolean => agent.efforts.includes(effort);

/** UUIDs of any version, lower or upper case: what a path id or a cursor must look like. */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** UUIDv7 exactly: what the world file's ids must be. */
export const UUID7_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The creation time a UUIDv7 carries in its first 48 bits, as an ISO string. */
export function uuid7Time(id: string): string {
  const millis = parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
  return new Date(millis).toISOString();
}
