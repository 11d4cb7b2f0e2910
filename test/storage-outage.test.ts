import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { QUERY_TIMEOUT_MS } from '../adapters/mikro-orm/orm.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { startFreezableProxy } from './support/freezable-proxy.ts';
import { connectLive } from './support/live-client.ts';
import { createScratchDatabase } from './support/scratch-database.ts';
import { startService, type TestService } from './support/service.ts';

const headers = { authorization: 'Bearer token-alice' };

/** A database to freeze: embedded PGlite always, and a scratch database when TEST_DATABASE_URL names a server. */
const targets: { name: string; open: () => Promise<{ url: string; pool?: number; close: () => Promise<void> }> }[] = [
  {
    name: 'embedded PGlite',
    open: async () => {
      const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: 20 });
      return { url: server.url, pool: EMBEDDED_POOL_SIZE, close: server.close };
    },
  },
  ...(process.env.TEST_DATABASE_URL
    ? [{
        name: 'PostgreSQL',
        open: async () => {
          const scratch = await createScratchDatabase(process.env.TEST_DATABASE_URL!);
          return { url: scratch.url, close: scratch.drop };
        },
      }]
    : []),
];

/** Asks until the answer has `status`, or fails after `ms`. */
async function until(service: TestService, path: string, status: number, ms: number): Promise<number> {
  const began = Date.now();
  for (;;) {
    const answer = await service.ask({ path, headers });
    if (answer.status === status) return Date.now() - began;
    if (Date.now() - began > ms) assert.fail(`${path} still answers ${answer.status} after ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('a frozen database', () => {
  for (const target of targets) {
    it(`${target.name}: requests answer 503 within a few seconds, and 200 again once it answers`, { timeout: 90_000 }, async () => {
      const database = await target.open();
      const proxy = await startFreezableProxy(database.url);
      const storage = await createMikroOrmStorage({ clientUrl: proxy.url, pool: database.pool });
      await storage.importWorld(fixtureWorld());
      const service = await startService({}, { storage });
      try {
        assert.equal((await service.ask({ path: '/api/console/threads', headers })).status, 200);
        proxy.freeze();
        // Several at once: some wait on a frozen connection, some for the pool.
        const began = Date.now();
        const answers = await Promise.all(
          ['/api/console/threads', '/api/console/threads', '/api/console/projects', '/api/console/threads', '/api/console/channels'].map((path) =>
            service.ask({ path, headers }),
          ),
        );
        const took = Date.now() - began;
        for (const answer of answers) {
          assert.equal(answer.status, 503, answer.text);
          assert.equal(answer.json().detail, 'Storage is unavailable');
        }
        assert.ok(took < QUERY_TIMEOUT_MS * 2 + 2_000, `answered after ${took} ms`);
        assert.equal((await service.ask({ path: '/readyz' })).status, 503);
        const live = await connectLive(service.port, { thread: randomUUID() });
        assert.deepEqual(live, { refused: 503 }, 'the live socket answers 503 while storage is down');
        assert.ok(!service.logs.some((l) => (l.level as number) >= 50), 'an outage is not logged as an error');

        proxy.thaw();
        await until(service, '/api/console/threads', 200, QUERY_TIMEOUT_MS * 2);
        assert.equal((await service.ask({ path: '/readyz' })).status, 200);
      } finally {
        await service.close();
        await proxy.close();
        await database.close();
      }
    });
  }
});

describe('storage that is down', () => {
  it('the live socket refuses its upgrade with 503 problem+json, logged as a warning', { timeout: 60_000 }, async () => {
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
    const service = await startService({}, { storage });
    try {
      await server.close();
      const live = await connectLive(service.port, { thread: randomUUID() });
      assert.deepEqual(live, { refused: 503 });
      assert.ok(!service.logs.some((l) => l.msg === 'live upgrade failed'));
      assert.ok(service.logs.some((l) => l.msg === 'storage unavailable' && l.level === 40));
    } finally {
      await service.close();
    }
  });
});
