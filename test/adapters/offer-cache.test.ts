import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { createOfferCache, unavailableReason } from '../../adapters/acp/offer-cache.ts';
import type { Agent } from '../../domain/model.ts';
import type { AgentOffer } from '../../domain/vocabulary.ts';
import { waitFor } from '../support/wait-for.ts';

const agent: Agent = { id: 'codex', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null };
const OFFER: AgentOffer = { modes: ['auto'], currentMode: 'auto', models: ['gpt-5'], efforts: ['low'] };
const log = pino({ level: 'silent' });

/** A probe whose answers the test scripts, one per call; it counts the calls. */
function scripted(...answers: (() => Promise<AgentOffer>)[]) {
  const probe = Object.assign(async () => {
    probe.calls += 1;
    return (answers[probe.calls - 1] ?? answers.at(-1)!)();
  }, { calls: 0 });
  return probe;
}
const never = () => new Promise<AgentOffer>(() => {});
const timed = async <T>(work: Promise<T>) => {
  const start = Date.now();
  const value = await work;
  return { value, ms: Date.now() - start };
};

describe('what agents offer, cached (createOfferCache)', () => {
  // The cache's timers do not hold the process (a server's requests do): this suite holds it.
  let hold: NodeJS.Timeout;
  before(() => void (hold = setInterval(() => {}, 1_000)));
  after(() => clearInterval(hold));

  it('a silent agent is waited for once, by a check: reads never wait, and a check after the retry period answers at once', async () => {
    const probe = scripted(never);
    const clock = { now: 0 };
    const cache = createOfferCache({ probe, log, timeoutMs: 300, retryMs: 50, now: () => clock.now });
    const read = await timed(cache.offers(agent));
    assert.deepEqual(read.value, { kind: 'unknown' });
    assert.ok(read.ms < 50, `a read waited ${read.ms} ms`);
    const check = await timed(cache.offers(agent, { wait: true }));
    assert.deepEqual(check.value, { kind: 'unavailable', reason: 'the agent did not answer within 300 ms' });
    assert.ok(check.ms < 400, `the first check waited ${check.ms} ms`);
    clock.now += 80;
    // Unavailable past the retry period: asked again behind, answered at once meanwhile (it used to wait 10 s every 30 s).
    const again = await timed(cache.offers(agent, { wait: true }));
    assert.equal(again.value.kind, 'unavailable');
    assert.ok(again.ms < 50, `a check after the retry period waited ${again.ms} ms`);
    assert.equal(probe.calls, 2);
  });

  it('an agent that recovers is learned in the background, and one whose refresh fails becomes unavailable', async () => {
    const probe = scripted(
      async () => Promise.reject(new Error('the agent could not start: its command was not found')),
      async () => OFFER,
      async () => Promise.reject(new Error('the agent needs authentication (it offers login); give it credentials through its env or env_pass')),
    );
    const clock = { now: 0 };
    const cache = createOfferCache({ probe, log, timeoutMs: 1_000, retryMs: 30, now: () => clock.now });
    assert.deepEqual(await cache.offers(agent, { wait: true }), { kind: 'unavailable', reason: 'the agent could not start: its command was not found' });
    clock.now += 40;
    assert.equal((await cache.offers(agent)).kind, 'unavailable', 'answered at once, asked behind');
    await waitFor(async () => (await cache.offers(agent)).kind === 'offered', { what: 'the offer learned behind' });
    assert.deepEqual(await cache.offers(agent), { kind: 'offered', offer: OFFER });
    cache.refresh(agent);
    await waitFor(async () => (await cache.offers(agent)).kind === 'unavailable', { what: 'the failed refresh taken' });
    assert.deepEqual(await cache.offers(agent), { kind: 'unavailable', reason: 'the agent needs authentication (it offers login); give it credentials through its env or env_pass' });
  });

  it('a refresh keeps the known offer answered at once until the new answer comes', async () => {
    let answer!: (offer: AgentOffer) => void;
    const probe = scripted(async () => OFFER, () => new Promise<AgentOffer>((resolve) => (answer = resolve)));
    const cache = createOfferCache({ probe, log, timeoutMs: 1_000, retryMs: 30_000 });
    await cache.offers(agent, { wait: true });
    cache.refresh(agent);
    const meanwhile = await timed(cache.offers(agent, { wait: true }));
    assert.deepEqual(meanwhile.value, { kind: 'offered', offer: OFFER });
    assert.ok(meanwhile.ms < 50);
    const next = { ...OFFER, efforts: ['low', 'high'] };
    answer(next);
    await waitFor(async () => { const now = await cache.offers(agent); return now.kind === 'offered' && now.offer === next; }, { what: 'the new answer taken' });
    assert.deepEqual(await cache.offers(agent), { kind: 'offered', offer: next });
  });

  it("a reason never carries the agent's own text: only the service's sentences are kept", () => {
    assert.equal(unavailableReason(new Error('the agent needs authentication (it offers demo-login); give it credentials through its env or env_pass')),
      'the agent needs authentication (it offers demo-login); give it credentials through its env or env_pass');
    assert.equal(unavailableReason(new Error('the agent could not start: exited with status 1')), 'the agent could not start: exited with status 1');
    assert.equal(unavailableReason(new Error('the agent did not answer session/new within 1.5 s')), 'the agent did not answer session/new within 1.5 s');
    assert.equal(unavailableReason(new Error('the agent could not start: connection failed: Unexpected token "sk-live-123" in JSON')), 'the agent could not start');
    assert.equal(unavailableReason(new Error('Please run /login: {"error":"invalid x-api-key sk-live-123"}')), 'the agent could not open a session');
    assert.equal(unavailableReason('boom'), 'the agent could not open a session');
  });
});
