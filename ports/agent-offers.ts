import type { Agent } from '../domain/model.ts';
import type { AgentOfferState } from '../domain/vocabulary.ts';

/**
 * What an agent offers (its modes, the mode a new session starts in, its models and efforts),
 * learned from the agent itself and cached by the adapter. Answers at once from what is known: the
 * offer learned last (kept when its process ends), or why the agent is unavailable. When nothing is
 * known yet, or the agent has been unavailable for the adapter's retry period, it asks the agent in
 * the background. With `wait`, and only while nothing at all is known, it waits for that first
 * answer, never longer than the adapter's bound (then the agent is unavailable: it did not answer in
 * time). Never rejects.
 */
export type AgentOffers = (agent: Agent, options?: { readonly wait?: boolean }) => Promise<AgentOfferState>;
