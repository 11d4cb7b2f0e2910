import { setTimeout as sleep } from 'node:timers/promises';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';

/** What the fake answers for an agent: its offer, `broken` (null at once) or `silent` (null once the bound has passed). */
export type FakeOffer = AgentOffer | 'broken' | 'silent';

/**
 * An {@link AgentOffers} from a table by agent id, for tests that need no agent process. It keeps the
 * port's contract (the same suite as the ACP adapter): an unknown or broken agent is null, a silent
 * one is null after `boundMs` and at once while it is remembered as silent.
 */
export function fakeAgentOffers(table: Readonly<Record<string, FakeOffer>>, options: { readonly boundMs?: number } = {}): AgentOffers {
  const boundMs = options.boundMs ?? 200;
  const silent = new Set<string>();
  return async (agent) => {
    const entry = table[agent.id];
    if (entry === undefined || entry === 'broken') return null;
    if (entry === 'silent') {
      if (!silent.has(agent.id)) await sleep(boundMs);
      silent.add(agent.id);
      return null;
    }
    return entry;
  };
}
