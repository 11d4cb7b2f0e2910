import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { isBackgroundStatement } from '../support/background-statements.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';

/**
 * Statements per console read, end to end over HTTP on the MikroORM adapter: the caller (1), the
 * thread (1), and what the read answers (1). A read that loaded a relation it does not answer
 * (the ledger on a thread read, say) would show here as one more.
 */
describe('statements per console read over HTTP', () => {
  let server: EmbeddedPostgres;
  let service: TestService;
  const sent: string[] = [];

  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE, onQuery: (sql) => void (isBackgroundStatement(sql) || sent.push(sql)) });
    await storage.importWorld(fixtureWorld());
    // A long lease: no periodic sweep runs during the counts; the one at start is waited out.
    service = await startService({ TURN_LEASE_MS: '3600000' }, { storage });
    for (let seen = -1; seen !== sent.length;) {
      seen = sent.length;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  });
  after(async () => {
    await service.close();
    await server.close();
  });

  const statements = async (path: string, status = 200): Promise<string[]> => {
    sent.length = 0;
    const res = await service.ask({ path, headers: { authorization: 'Bearer token-alice' } });
    assert.equal(res.status, status, path);
    return [...sent];
  };

  it('a thread read is the caller and one thread statement; it never touches messages', async () => {
    const sql = await statements(`/api/console/threads/${F.forkOfFork}`);
    assert.equal(sql.length, 2);
    assert.ok(!sql.some((s) => /\bmessages\b/.test(s)), 'the thread read must not read the ledger');
  });

  it('a page under a thread is the caller, the thread, and one statement', async () => {
    for (const path of [
      `/api/console/threads/${F.forkOfFork}/messages?limit=2`,
      `/api/console/threads/${F.root}/conversations/${F.conv}/runs`,
      `/api/console/threads/${F.root}/runs/${F.runs[0]}/messages`,
      `/api/console/threads/${F.root}/conversations`,
      `/api/console/threads/${F.root}/pending`,
    ]) {
      assert.equal((await statements(path)).length, 3, path);
    }
  });

  it('an inaccessible thread stops after the thread statement', async () => {
    assert.equal((await statements(`/api/console/threads/${F.bobThread}/messages`, 404)).length, 2);
  });

  it('the thread listing is the caller and one statement', async () => {
    assert.equal((await statements('/api/console/threads')).length, 2);
  });
});
