import pino from 'pino';
import { createOfferCache } from '../../adapters/acp/offer-cache.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';

/** What the fake answers for an agent: its offer, `broken` (it cannot start) or `silent` (it never answers). */
export type FakeOffer = AgentOffer | 'broken' | 'silent';

/**
 * An {@link AgentOffers} from a table by agent id, for tests that need no agent process: the ACP
 * adapter's cache over a probe that reads the table, so it keeps the port's contract (the same suite
 * as the ACP adapter). An unknown or broken agent cannot start; a silent one never answers, and is
 * unavailable once `boundMs` has passed. With `answerAfterMs`, every probe answers that much later (a slow agent).
 */
export function fakeAgentOffers(
  table: Readonly<Record<string, FakeOffer>>,
  options: { readonly boundMs?: number; readonly retryMs?: number; readonly answerAfterMs?: number } = {},
): AgentOffers {
  const probe = async (agent: { readonly id: string }): Promise<AgentOffer> => {
    if (options.answerAfterMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.answerAfterMs));
    const entry = table[agent.id];
    if (entry === undefined || entry === 'broken') throw new Error('the agent could not start: its command was not found');
    if (entry === 'silent') return new Promise<never>(() => {});
    return entry;
  };
  return createOfferCache({ probe, log: pino({ level: 'silent' }), timeoutMs: options.boundMs ?? 200, retryMs: options.retryMs ?? 30_000 }).offers;
}
