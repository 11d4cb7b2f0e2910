import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { World } from '../../domain/world.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';
import { builtDemoAgent } from '../support/built.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console';
const SLOW_THREAD = '01900000-0000-7000-8000-0000000000a1';
const SLOW_CONVERSATION = '01900000-0000-7000-8000-0000000000a2';
/** The bundled demo agent, started only after `sleep 3`: an agent slow to say what it offers. */
const SLOW = ['sh', '-c', 'sleep 3 && exec "$0" "$@"', ...builtDemoAgent()];
/** What no read (nor a directive that picks nothing) may take: far less than the slow agent's start. */
const QUICK_MS = 1_500;

function world(): World {
  const base = fixtureWorld();
  return {
    ...base,
    agents: [
      { id: 'claude', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null },
      { id: 'slow', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: SLOW },
    ],
    channels: base.channels.map((channel) => (channel.id === 'console' ? { ...channel, agents: ['claude', 'slow'] } : { ...channel, agents: [] })),
    threads: [{
      id: SLOW_THREAD, key: null, channel: 'console', owner: 'alice', members: [], project: null, title: 'On the slow agent', fork_of: null, fork_cutoff: null, messages: [],
      conversations: [{ id: SLOW_CONVERSATION, agent: 'slow', model: 'opus', permission_mode: 'default', effort: null, address: null, turn_running: false, pending: [], runs: [] }],
    }],
  } as World;
}

describe('reads answer from what is known: a slow agent holds no read', { timeout: 60_000 }, () => {
  let service: TestService;
  before(async () => {
    const storage = createMemoryStorage();
    await storage.importWorld(world());
    service = await startService({}, { storage });
  });
  after(() => service.close());

  const timed = async (path: string, method = 'GET', body?: unknown) => {
    const start = Date.now();
    const res = await service.ask({ method, path, headers: ALICE, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    return { res, ms: Date.now() - start };
  };

  it('/routes, /permissions, /operations and a directive that picks nothing answer at once; a check waits for the first answer only; the agent is learned behind', async () => {
    for (const path of [`${P}/routes`, `${P}/permissions`, `${P}/threads/${SLOW_THREAD}/operations`]) {
      const { res, ms } = await timed(path);
      assert.equal(res.status, 200, res.text);
      assert.ok(ms < QUICK_MS, `${path} took ${ms} ms`);
      assert.ok(!res.text.includes('"slow'), `${path} lists the slow agent before it said what it offers: ${res.text}`);
    }
    const directive = await timed(`${P}/threads/${SLOW_THREAD}/directives`, 'POST', { text: 'carry on' });
    assert.equal(directive.res.status, 202, directive.res.text);
    assert.ok(directive.ms < QUICK_MS, `a directive naming nothing waited ${directive.ms} ms on the offer`);

    // A new thread naming the slow agent's mode must be checked: it waits (bounded) for its first answer.
    const checked = await timed(`${P}/threads/${randomUUID()}/directives`, 'POST', { text: 'hi', model: 'slow:sonnet', permission_mode: 'plan' });
    assert.equal(checked.res.status, 202, checked.res.text);

    // Learned: reads now list it, still at once.
    let routes: { id: string }[] = [];
    for (let tries = 0; tries < 50 && !routes.some((r) => r.id === 'slow:sonnet'); tries++) {
      const { res, ms } = await timed(`${P}/routes`);
      assert.ok(ms < QUICK_MS);
      routes = res.json();
      if (!routes.some((r) => r.id === 'slow:sonnet')) await sleep(100);
    }
    assert.ok(routes.some((r) => r.id === 'slow:sonnet'), JSON.stringify(routes));
  });
});
