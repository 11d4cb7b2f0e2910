import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';

/**
 * The embedded database's catalog (src/open-database.ts opens it kept): agents and projects read once, then
 * answered from memory (two statements fewer before a turn's prompt, issue 28), until a world import;
 * a storage opened without `catalog` (PostgreSQL, which other instances may write) reads them each time.
 */
describe('a kept catalog on embedded PGlite', () => {
  let server: EmbeddedPostgres;
  let kept: MikroOrmStorage;
  let plain: MikroOrmStorage;
  const statements: string[] = [];
  const catalogReads = () => statements.filter((sql) => /from (agents|projects)\b/.test(sql)).length;
  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    kept = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE, onQuery: (sql) => statements.push(sql) }, { catalog: true });
    plain = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await kept.importWorld(fixtureWorld());
  });
  after(async () => {
    await kept.close();
    await plain.close();
    await server.close();
  });

  it('reads agents and projects once, and answers the same as a storage that reads them each time', async () => {
    const first = catalogReads();
    for (let i = 0; i < 3; i++) {
      assert.deepEqual(await kept.catalog.agents(), await plain.catalog.agents());
      assert.deepEqual(await kept.catalog.projects(), await plain.catalog.projects());
      assert.deepEqual(await kept.catalog.project('acme-web'), await plain.catalog.project('acme-web'));
      assert.equal(await kept.catalog.project('nope'), null);
    }
    assert.equal(catalogReads() - first, 2, 'the agents once, the projects once');
  });

  it('a world imported through it is seen at once', async () => {
    const world = fixtureWorld();
    await kept.catalog.agents();
    await kept.importWorld({
      ...world,
      agents: world.agents.map((agent, at) => (at === 0 ? { ...agent, command: ['changed-command'] } : agent)),
      projects: [...world.projects, { name: 'added', directory: '/srv/added', repo: null, base: null }],
    });
    assert.deepEqual((await kept.catalog.agents())[0]!.command, ['changed-command']);
    assert.ok((await kept.catalog.projects()).includes('added'));
    assert.deepEqual(await kept.catalog.project('added'), { name: 'added', directory: '/srv/added', repo: null, base: null });
    assert.deepEqual(await kept.catalog.agents(), await plain.catalog.agents());
  });

  it('is not kept unless asked: a storage opened without it reads a change another writer made', async () => {
    const world = fixtureWorld();
    await plain.catalog.agents();
    await kept.importWorld({ ...world, agents: world.agents.map((agent, at) => (at === 0 ? { ...agent, command: ['again'] } : agent)) });
    assert.deepEqual((await plain.catalog.agents())[0]!.command, ['again']);
  });
});
