import assert from 'node:assert/strict';
import { createHook } from 'node:async_hooks';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it, type TestContext } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { sha256 } from '../support/ids.ts';
import { startService, type TestService } from '../support/service.ts';

/** The repository's root, as stack frames name its files. */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * Promises made by the service's own code (a frame of the repository's, not a dependency's and not
 * the test's) while `work` runs. Each is made, settled and awaited: with a promise hook on (the
 * AsyncLocalStorage MikroORM enables, or this one), each costs its creation twice over, and a
 * microtask turn. An `await` makes one too under a hook (V8's throwaway promise), so an `async`
 * step that only forwards shows here.
 */
async function ownPromises(work: () => Promise<unknown>): Promise<{ count: number; sites: Map<string, number> }> {
  let count = 0;
  const sites = new Map<string, number>();
  const limit = Error.stackTraceLimit;
  const hook = createHook({
    init(_id, type) {
      if (type !== 'PROMISE') return;
      Error.stackTraceLimit = 8;
      const stack = new Error().stack ?? '';
      Error.stackTraceLimit = limit;
      // The first frame that is code at all (not the hook, not `new Promise`/`Promise.then` themselves).
      const frame = stack.split('\n').slice(1).find((line) => line.includes('/') && !line.includes('node:internal') && !line.includes(fileURLToPath(import.meta.url)));
      if (frame === undefined || !frame.includes(ROOT) || frame.includes('/node_modules/') || frame.includes(`${ROOT}test/`)) return;
      count += 1;
      const site = frame.trim().replace(ROOT, '');
      sites.set(site, (sites.get(site) ?? 0) + 1);
    },
  });
  hook.enable();
  try {
    await work();
  } finally {
    hook.disable();
  }
  return { count, sites };
}

const describeSites = (sites: Map<string, number>): string =>
  [...sites].sort((a, b) => b[1] - a[1]).map(([site, n]) => `  ${n} ${site}`).join('\n');

/**
 * Issue 28: the promises a thread read and a messages page make in the service's own code, under
 * load (more requests at once than the pool has connections and the guess limit admits lookups, so
 * statements wait for a connection and requests for their lookup). A statement is one promise
 * (runStatement: the connection leased and the statement sent by callbacks, the rows mapped before it
 * settles), a store adds none, the guess limit one (a waiting request one more), and each of the
 * authenticator, the use case and the handler one. Before: 29 per thread read and 42 per messages page.
 */
describe('promises per read under load (issue 28)', () => {
  let server: EmbeddedPostgres;
  let storage: MikroOrmStorage;
  let service: TestService;
  const headers = { authorization: 'Bearer token-alice' };

  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
    // A long lease: no periodic sweep runs during the counts.
    service = await startService({ TURN_LEASE_MS: '3600000' }, { storage });
  });
  after(async () => {
    await service.close();
    await server.close();
  });

  const AT_ONCE = 40;
  const load = async (t: TestContext, path: string): Promise<{ perRequest: number; sites: Map<string, number>; bodies: Set<string> }> => {
    const bodies = new Set<string>();
    const ask = async () => {
      const answer = await service.ask({ path, headers });
      assert.equal(answer.status, 200, answer.text);
      bodies.add(answer.text);
    };
    await Promise.all(Array.from({ length: AT_ONCE }, ask)); // warm: the pool filled, the routes compiled
    const { count, sites } = await ownPromises(() => Promise.all(Array.from({ length: AT_ONCE }, ask)));
    t.diagnostic(`${path}: ${count / AT_ONCE} promises per request`);
    return { perRequest: count / AT_ONCE, sites, bodies };
  };

  it('a thread read makes at most 12 promises of its own', async (t) => {
    const { perRequest, sites, bodies } = await load(t, `/api/console/threads/${F.forkOfFork}`);
    assert.equal(bodies.size, 1, 'every answer the same');
    assert.ok(perRequest <= 12, `${perRequest} promises per thread read:\n${describeSites(sites)}`);
  });

  it('a messages page makes at most 15 promises of its own', async (t) => {
    const { perRequest, sites, bodies } = await load(t, `/api/console/threads/${F.root}/messages?limit=50`);
    assert.equal(bodies.size, 1, 'every answer the same');
    assert.ok(perRequest <= 15, `${perRequest} promises per messages page:\n${describeSites(sites)}`);
  });

  it('a statement is one promise, whether its connection comes from the pool or from the statement before', async () => {
    const { sites } = await ownPromises(() => Promise.all(Array.from({ length: 60 }, () => storage.accounts.userByCredential(sha256('token-alice'), new Date().toISOString()))));
    // The service's own timers (a delivery pass) may run meanwhile: only the statements' module is counted.
    const statements = [...sites].filter(([site]) => site.includes('adapters/mikro-orm/')).reduce((sum, [, n]) => sum + n, 0);
    // One each; an ask of the pool (at most twice its size here, as the statements hand connections on) one more.
    assert.ok(statements <= 60 + 2 * EMBEDDED_POOL_SIZE, `${statements} promises for 60 statements:\n${describeSites(sites)}`);
  });
});
