import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fakeAgentOffers } from '../support/fake-agent-offers.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { waitUntil } from '../support/npm-start.ts';
import { startService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice' };
/** What the fixture's agents offer; each says so only after ANSWER_MS. */
const claude = { modes: ['default', 'plan'], currentMode: 'default', models: ['opus'], efforts: [] };
const ANSWER_MS = 800;

/**
 * /readyz answered 200 about 200 ms before /routes listed any agent (the offers were learned in the
 * background): a client that waited for readiness, then read /routes, got []. Ready now means every
 * agent's first probe has answered or failed.
 */
describe('ready means the agents are known', { timeout: 30_000 }, () => {
  it('/readyz is 503 agents_not_known until the slow agent answered its probe, then 200, and /routes right after lists it', async (t) => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const started = Date.now();
    // codex cannot start: a probe that fails counts as answered, as one that times out would.
    const service = await startService({}, { storage, offers: fakeAgentOffers({ claude, codex: 'broken' }, { answerAfterMs: ANSWER_MS, boundMs: 10_000 }), warmOffers: true });
    t.after(() => service.close());

    const early = await service.ask({ path: '/readyz' });
    assert.equal(early.status, 503, early.text);
    assert.equal(early.json().code, 'agents_not_known');
    assert.equal((await service.ask({ path: '/healthz' })).status, 200, 'alive meanwhile');

    await waitUntil(async () => (await service.ask({ path: '/readyz' })).status === 200, 5_000, '/readyz never answered 200');
    assert.ok(Date.now() - started >= ANSWER_MS, `ready after ${Date.now() - started} ms, before the agent answered`);
    const routes = await service.ask({ path: '/api/console/routes', headers: ALICE });
    assert.equal(routes.status, 200, routes.text);
    assert.ok(routes.text.includes('"claude'), `the first read after ready lists the agent: ${routes.text}`);
    const permissions = await service.ask({ path: '/api/console/permissions', headers: ALICE });
    assert.ok(permissions.text.includes('"claude'), permissions.text);
  });

  it('an agent that never answers holds readiness only until its time-out', async (t) => {
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const service = await startService({}, { storage, offers: fakeAgentOffers({ claude, codex: 'silent' }, { boundMs: 500 }), warmOffers: true });
    t.after(() => service.close());
    await waitUntil(async () => (await service.ask({ path: '/readyz' })).status === 200, 5_000, '/readyz never answered 200 past the time-out');
    const routes = await service.ask({ path: '/api/console/routes', headers: ALICE });
    assert.ok(routes.text.includes('"claude'), routes.text);
  });
});
