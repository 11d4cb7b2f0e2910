import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Agent } from '../../domain/model.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';

/** What an offers suite runs on: the adapter, agents of each behaviour, and what the working ones advertise. */
export interface OffersFixture {
  readonly offers: AgentOffers;
  /** Two working agents that advertise different things: answers are per agent. */
  readonly working: readonly [{ readonly agent: Agent; readonly offer: AgentOffer }, { readonly agent: Agent; readonly offer: AgentOffer }];
  /** An agent that cannot start. */
  readonly broken: Agent;
  /** An agent that starts and never answers. */
  readonly silent: Agent;
  /** The adapter's bound: no answer takes longer. */
  readonly boundMs: number;
  readonly close: () => Promise<void>;
}

/** Bounded waits only: an answer must come within `ms`. */
async function timed<T>(promise: Promise<T>, ms: number): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    return { value: await Promise.race([promise, limit]), ms: Date.now() - start };
  } finally {
    clearTimeout(timer);
  }
}

/** The contract of the {@link AgentOffers} port, run against each adapter (the ACP runner, the fake). */
export function agentOffersContract(name: string, factory: () => Promise<OffersFixture>): void {
  describe(`agent offers contract: ${name}`, () => {
    let f: OffersFixture;
    before(async () => {
      f = await factory();
    });
    after(() => f.close());
    const slack = 5_000;

    it('answers what a working agent advertises, with the mode a session starts in among its modes', async () => {
      for (const { agent, offer } of f.working) {
        const { value } = await timed(f.offers(agent), f.boundMs + slack);
        assert.deepEqual(value, offer);
        assert.ok(offer.currentMode === null || offer.modes.includes(offer.currentMode));
      }
    });

    it('answers the same again, and to concurrent askers', async () => {
      const [{ agent, offer }] = f.working;
      const answers = await Promise.all([f.offers(agent), f.offers(agent), f.offers(agent)]);
      for (const answer of answers) assert.deepEqual(answer, offer);
    });

    it('answers null, never rejects, for an agent that cannot start', async () => {
      const { value } = await timed(f.offers(f.broken), f.boundMs + slack);
      assert.equal(value, null);
    });

    it('answers null within its bound for an agent that never answers, and at once when asked again soon', async () => {
      const first = await timed(f.offers(f.silent), f.boundMs + slack);
      assert.equal(first.value, null);
      const again = await timed(f.offers(f.silent), f.boundMs + slack);
      assert.equal(again.value, null);
      assert.ok(again.ms < f.boundMs, `asked again it answered after ${again.ms} ms`);
      // A silent agent does not hold the others.
      assert.deepEqual((await timed(f.offers(f.working[1].agent), f.boundMs + slack)).value, f.working[1].offer);
    });
  });
}
