import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { UserSchema } from '../../adapters/mikro-orm/entities/catalog.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { StorageUnavailableError } from '../../ports/storage.ts';
import { createLogger } from '../../src/logging.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { databaseSkip } from '../support/storage-kinds.ts';
import { waitFor } from '../support/wait-for.ts';

/** A logger writing into `lines`, as the service's does into its destination. */
function captured(lines: string[]) {
  return createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
}

const SECRETS = ['QUERY-TOKEN', 'QUERY-KEY', 'LIVE-TOKEN', 'MCP-PASS', 'MCP-KEY', 'MCP-UPPER-PASS'];

describe('failures are clean in the logs: no credential of a URL', () => {
  let service: TestService;
  const adapterLines: string[] = [];

  before(async () => {
    const world = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      installations: world.installations.map((i) =>
        i.id === F.installation ? { ...i, server_url: 'http://mcp-user:MCP-PASS@127.0.0.1:1/mcp?api_key=MCP-KEY' }
        : i),
    });
    service = await startService({ MCP_TIMEOUT_MS: '1000' }, { storage, fetchUiResource: createFetchUiResource({ log: captured(adapterLines) }) });
  });
  after(() => service.close());

  const logged = () => JSON.stringify(service.logs) + adapterLines.join('');

  it("a request's query credentials (a token, a key) are never logged", async () => {
    const res = await service.ask({ path: '/api/console/threads?limit=1&token=QUERY-TOKEN&api_key=QUERY-KEY', headers: { authorization: 'Bearer token-alice' } });
    assert.equal(res.status, 200);
    await service.ask({ path: '/api/console/threads?limit=oops&access_token=QUERY-TOKEN', headers: { authorization: 'Bearer token-alice' } });
    const live = await connectLive(service.port, { thread: F.root, access_token: 'LIVE-TOKEN' }, { authorization: 'Bearer token-alice' });
    if (!('refused' in live)) live.close();
    await waitFor(() => service.logs.some((line) => line.msg === 'live socket open'), { what: "the live socket's line" });
    assert.ok(service.logs.some((line) => line.msg === 'request'), 'the request lines were written');
    for (const secret of ['QUERY-TOKEN', 'QUERY-KEY', 'LIVE-TOKEN']) assert.ok(!logged().includes(secret), secret);
  });

  it("an MCP server_url's password and credential parameters are never logged when its load fails", async () => {
    const res = await service.ask({ path: `/api/artifacts/${F.artifact}`, headers: { authorization: 'Bearer token-alice', host: `localhost:${service.port}` } });
    assert.equal(res.status, 502, res.text);
    for (const secret of SECRETS) assert.ok(!res.text.includes(secret), `${secret} answered: ${res.text}`);
    assert.ok(service.logs.some((line) => /could not be loaded/.test(String(line.msg))), 'the failure was logged');
    // The adapter alone, with URLs its own clean-up does not match word for word (case, a bad port).
    const fetchUi = createFetchUiResource({ log: captured(adapterLines) });
    for (const url of ['HTTP://mcp-user:MCP-UPPER-PASS@127.0.0.1:1/mcp', 'http://mcp-user:MCP-PASS@127.0.0.1:99999/mcp?key=MCP-KEY']) {
      const result = await fetchUi({ server_url: url, headers: {} }, 'ui://weather/card', { timeoutMs: 1000 });
      assert.equal(result.ok, false);
    }
    for (const secret of SECRETS) assert.ok(!logged().includes(secret), `${secret} logged: ${logged()}`);
  });

  it("a DATABASE_URL's password is not in the line logged when the database cannot be opened", async () => {
    const lines: string[] = [];
    const log = captured(lines);
    await assert.rejects(async () => {
      try {
        await createMikroOrmStorage({ clientUrl: 'postgres://console:DB-PASS@127.0.0.1:1/console' });
      } catch (error) {
        log.fatal({ err: error, url: 'postgres://console:DB-PASS@127.0.0.1:1/console' }, 'storage could not be opened');
        throw error;
      }
    });
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('DB-PASS'), lines[0]);
    assert.match(lines[0]!, /console:\[redacted\]@127\.0\.0\.1/);
  });

  it("a database error wrapped as a cause (StorageUnavailableError) logs no statement, value or row detail", { skip: databaseSkip() }, async () => {
    // A real MikroORM exception from a failing insert, on the embedded stack.
    const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    let failure: unknown;
    try {
      await storage.orm.em.fork().insert(UserSchema, { id: 'u-cause', name: null as unknown as string, token_hash: 'STATEMENT-SECRET' });
    } catch (error) {
      failure = error;
    } finally {
      await storage.close();
      await server.close();
    }
    assert.ok(failure instanceof Error && failure.message.includes('STATEMENT-SECRET'), 'the driver put the value in its message');
    const lines: string[] = [];
    captured(lines).warn({ err: new StorageUnavailableError({ cause: failure }) }, 'storage unavailable');
    assert.equal(lines.length, 1);
    assert.ok(!lines[0]!.includes('STATEMENT-SECRET'), lines[0]);
    assert.ok(!/insert into/i.test(lines[0]!), lines[0]);
    const err = JSON.parse(lines[0]!).err;
    assert.equal(err.type, 'StorageUnavailableError');
    assert.deepEqual(err.cause, { type: 'NotNullConstraintViolationException', code: '23502', message: 'null value in column "name" of relation "users" violates not-null constraint' });
  });
});
