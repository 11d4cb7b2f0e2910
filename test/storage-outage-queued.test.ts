// Issue 41, "queued statements fail one after another through a long database outage": many requests at once
// while the database stops answering. Before, the statements queued behind the pool's frozen connections were
// each handed a connection in turn and each waited its own time-out (a handshake, or its statement), so the
// last request was answered after several time-outs in a row; now every statement queued when one fails for an
// outage fails with it, and they are all answered 503 within about one time-out.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { QUERY_TIMEOUT_MS } from '../adapters/mikro-orm/orm.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { startFreezableProxy } from './support/freezable-proxy.ts';
import { createScratchDatabase } from './support/scratch-database.ts';
import { startService } from './support/service.ts';

const headers = { authorization: 'Bearer token-alice' };
/** Requests asked at once: several times the pool, so most of their statements queue. */
const REQUESTS = 40;

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

describe('many requests during a database outage', () => {
  for (const target of targets) {
    it(`${target.name}: ${REQUESTS} requests at once are all answered 503 within about one time-out`, { timeout: 120_000 }, async () => {
      const database = await target.open();
      const proxy = await startFreezableProxy(database.url);
      const storage = await createMikroOrmStorage({ clientUrl: proxy.url, pool: database.pool });
      await storage.importWorld(fixtureWorld());
      const service = await startService({}, { storage });
      try {
        assert.equal((await service.ask({ path: '/api/console/threads', headers })).status, 200);
        proxy.freeze();
        const began = Date.now();
        const answers = await Promise.all(Array.from({ length: REQUESTS }, () => service.ask({ path: '/api/console/threads', headers })));
        const took = Date.now() - began;
        console.log(`# ${target.name}: ${REQUESTS} requests answered in ${took} ms during the outage`);
        for (const answer of answers) assert.equal(answer.status, 503, answer.text);
        assert.ok(took < QUERY_TIMEOUT_MS * 2, `all answered after ${took} ms (a time-out is ${QUERY_TIMEOUT_MS} ms)`);
        proxy.thaw();
        for (let tries = 0; (await service.ask({ path: '/api/console/threads', headers })).status !== 200; tries++) {
          assert.ok(tries < 100, 'storage answers again once the database does');
          await new Promise((resolve) => setTimeout(resolve, 200));
        }
      } finally {
        await service.close();
        await proxy.close();
        await database.close();
      }
    });
  }
});
