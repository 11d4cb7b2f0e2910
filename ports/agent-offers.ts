import type { Agent } from '../domain/model.ts';
import type { AgentOffer } from '../domain/vocabulary.ts';

/**
 * What an agent offers (its modes, the mode a new session starts in, its models and efforts),
 * learned from the agent itself and cached by the adapter. Answers null when the agent could not
 * say within the adapter's bound (it does not start, or does not answer in time); never rejects,
 * never waits longer than that bound.
 */
export type AgentOffers = (agent: Agent) => Promise<AgentOffer | null>;
