import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

// runStatement leases a connection, then tells knex's `query` listeners before it sends: a listener that
// throws must fail that statement alone, with its connection given back (else the pool drains and every
// later statement waits for ever).
describe('runStatement when a query listener throws', () => {
  let server: EmbeddedPostgres;
  let storage: MikroOrmStorage;
  let failing = 0;

  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    storage = await createMikroOrmStorage({
      clientUrl: server.url,
      pool: EMBEDDED_POOL_SIZE,
      onQuery: () => {
        if (failing > 0) {
          failing -= 1;
          throw new Error('listener failed');
        }
      },
    });
    await storage.importWorld(fixtureWorld());
  });
  after(async () => {
    await storage.close();
    await server.close();
  });

  it('fails the statement, gives its connection back, and later statements run', { timeout: 20_000 }, async () => {
    const times = EMBEDDED_POOL_SIZE * 2 + 1;
    failing = times;
    for (let i = 0; i < times; i++) await assert.rejects(storage.catalog.channels(), /listener failed/);
    assert.equal(failing, 0);
    const channels = await storage.catalog.channels();
    assert.ok(Array.isArray(channels));
  });
});
