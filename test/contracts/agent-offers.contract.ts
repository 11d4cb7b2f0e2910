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
  /** The adapter's bound: no answer takes longer (and one that does not wait is much quicker). */
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

    it('without wait, answers at once from what is known, and learns what an agent offers in the background', async () => {
      const [, { agent, offer }] = f.working;
      const first = await timed(f.offers(agent), f.boundMs + slack);
      assert.ok(first.ms < f.boundMs, `a read waited ${first.ms} ms`);
      assert.ok(['unknown', 'offered'].includes(first.value.kind), JSON.stringify(first.value));
      const deadline = Date.now() + f.boundMs + slack;
      let state = first.value;
      while (state.kind !== 'offered' && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
        state = await f.offers(agent);
      }
      assert.deepEqual(state, { kind: 'offered', offer });
    });

    it('with wait, answers what a working agent advertises, with the mode a session starts in among its modes', async () => {
      for (const { agent, offer } of f.working) {
        const { value } = await timed(f.offers(agent, { wait: true }), f.boundMs + slack);
        assert.deepEqual(value, { kind: 'offered', offer });
        assert.ok(offer.currentMode === null || offer.modes.includes(offer.currentMode));
      }
    });

    it('answers the same again, and to concurrent askers, at once', async () => {
      const [{ agent, offer }] = f.working;
      const answers = await timed(Promise.all([f.offers(agent), f.offers(agent, { wait: true }), f.offers(agent)]), f.boundMs);
      for (const answer of answers.value) assert.deepEqual(answer, { kind: 'offered', offer });
    });

    it('answers unavailable with a reason, never rejects, for an agent that cannot start', async () => {
      const { value } = await timed(f.offers(f.broken, { wait: true }), f.boundMs + slack);
      assert.equal(value.kind, 'unavailable');
      assert.match((value as { reason: string }).reason, /^the agent /);
    });

    it('answers unavailable within its bound for an agent that never answers, and at once when asked again', async () => {
      const unasked = await timed(f.offers(f.silent), f.boundMs);
      assert.ok(unasked.ms < f.boundMs, `a read waited ${unasked.ms} ms`);
      const first = await timed(f.offers(f.silent, { wait: true }), f.boundMs + slack);
      assert.equal(first.value.kind, 'unavailable');
      assert.match((first.value as { reason: string }).reason, /did not answer/);
      const again = await timed(f.offers(f.silent, { wait: true }), f.boundMs + slack);
      assert.equal(again.value.kind, 'unavailable');
      assert.ok(again.ms < f.boundMs / 2, `asked again it answered after ${again.ms} ms`);
      // A silent agent does not hold the others.
      assert.deepEqual((await timed(f.offers(f.working[1].agent, { wait: true }), f.boundMs)).value, { kind: 'offered', offer: f.working[1].offer });
    });
  });
}
