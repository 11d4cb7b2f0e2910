import type { Failure } from '../../domain/errors.ts';
import type { Agent, Channel } from '../../domain/model.ts';
import { offeredAgent, type AgentStanding, type OfferedAgent } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import type { Catalog } from '../../ports/catalog.ts';

/**
 * An agent of the catalog with what is known of its vocabularies: `offered` when it said what it
 * offers, `unavailable` (why) when its last probe failed or did not answer in time; both null while
 * nothing is known yet.
 */
export interface KnownAgent {
  readonly agent: Agent;
  readonly offered: OfferedAgent | null;
  readonly unavailable: string | null;
}

/** Which agents a caller needs checked: those are waited for (bounded) while nothing is known of them. */
export type WaitFor = (agentId: string) => boolean;
const waitForNone: WaitFor = () => false;

/**
 * The agents' vocabularies as the console uses them: what each agent advertises (asked through
 * `offers`, in parallel), narrowed by the catalog. Reads take what is known at once (the agent is
 * asked in the background); only a check waits, and only for an agent of which nothing is known yet.
 * An agent whose offer is not known offers nothing: no route, no posture, no effort.
 */
export function agentVocabularies(catalog: Pick<Catalog, 'agents' | 'channels'>, offers: AgentOffers) {
  const know = async (agent: Agent, wait: boolean): Promise<KnownAgent> => {
    const state = await offers(agent, { wait });
    return {
      agent,
      offered: state.kind === 'offered' ? offeredAgent(agent, state.offer) : null,
      unavailable: state.kind === 'unavailable' ? state.reason : null,
    };
  };
  return {
    /** Every agent, or those named by `ids` (in the catalog's order), each with what is known of it. */
    async all(ids?: readonly string[], wait: WaitFor = waitForNone): Promise<KnownAgent[]> {
      const agents = await catalog.agents();
      return Promise.all(agents.filter((agent) => ids === undefined || ids.includes(agent.id)).map((agent) => know(agent, wait(agent.id))));
    },
    /**
     * One agent by id with what is known of it (waited for when `wait`); null when the catalog has no such agent.
     * `agents` is the catalog's agents when the caller has begun reading them already.
     */
    async one(id: string, wait = false, agents: Promise<readonly Agent[]> = catalog.agents()): Promise<KnownAgent | null> {
      const agent = (await agents).find((candidate) => candidate.id === id);
      return agent === undefined ? null : know(agent, wait);
    },
    /**
     * Asks every agent connected to a channel what it offers (at start, so the first reads have it);
     * resolves once each has answered or failed, never later than the offers' time-out. Rejects only
     * when the catalog cannot be read.
     */
    async warm(): Promise<void> {
      const agents = agentsOnChannels(...(await Promise.all([catalog.channels(), catalog.agents()])));
      await Promise.all(agents.map((agent) => offers(agent, { wait: true })));
    },
  };
}

export type AgentVocabularies = ReturnType<typeof agentVocabularies>;

/** The agents connected to at least one of `channels`: those a start asks what they offer. */
export const agentsOnChannels = (channels: readonly Pick<Channel, 'agents'>[], agents: readonly Agent[]): Agent[] => {
  const connected = new Set(channels.flatMap((channel) => channel.agents));
  return agents.filter((agent) => connected.has(agent.id));
};

/** The vocabularies of the agents whose offer is known. */
export const offeredOnly = (known: readonly KnownAgent[]): OfferedAgent[] => known.flatMap((k) => (k.offered === null ? [] : [k.offered]));

/** What is known of each agent, as the domain rules take it. */
export const standings = (known: readonly KnownAgent[]): AgentStanding[] =>
  known.map((k) => ({ id: k.agent.id, offered: k.offered, unavailable: k.unavailable }));

/** The refusal for a request that needs agents that are unavailable: each named, with why. */
export const unavailableFailure = (down: readonly KnownAgent[], lead = ''): Failure => ({
  code: 'agent_unavailable',
  detail: lead + down.map((k) => `${k.agent.id} is unavailable: ${k.unavailable}`).join('; '),
});
