import type { Agent } from '../../domain/model.ts';
import { offeredAgent, type OfferedAgent } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import type { Catalog } from '../../ports/catalog.ts';

/** An agent of the catalog with its vocabularies in force; `offered` is null when the agent did not say what it offers. */
export interface KnownAgent {
  readonly agent: Agent;
  readonly offered: OfferedAgent | null;
}

/**
 * The agents' vocabularies as the console uses them: what each agent advertises (asked through
 * `offers`, in parallel), narrowed by the catalog. An agent whose offer is unknown offers nothing:
 * no route, no posture, no effort, so reads answer without it and checks refuse its vocabulary.
 */
export function agentVocabularies(catalog: Pick<Catalog, 'agents'>, offers: AgentOffers) {
  const know = async (agent: Agent): Promise<KnownAgent> => {
    const offer = await offers(agent);
    return { agent, offered: offer === null ? null : offeredAgent(agent, offer) };
  };
  return {
    /** Every agent, or those named by `ids`, each with what it offers. */
    async all(ids?: readonly string[]): Promise<KnownAgent[]> {
      const agents = await catalog.agents();
      return Promise.all(agents.filter((agent) => ids === undefined || ids.includes(agent.id)).map(know));
    },
    /** One agent by id with what it offers; null when the catalog has no such agent. */
    async one(id: string): Promise<KnownAgent | null> {
      const agent = (await catalog.agents()).find((candidate) => candidate.id === id);
      return agent === undefined ? null : know(agent);
    },
  };
}

export type AgentVocabularies = ReturnType<typeof agentVocabularies>;

/** The vocabularies of the agents whose offer is known. */
export const offeredOnly = (known: readonly KnownAgent[]): OfferedAgent[] => known.flatMap((k) => (k.offered === null ? [] : [k.offered]));
