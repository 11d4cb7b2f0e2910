import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const P = '/api/console';
const as = (user: 'alice' | 'bob') => ({ authorization: `Bearer token-${user}`, 'content-type': 'application/json' });

/**
 * What PostgreSQL cannot store, as JSON escapes in a raw body (JSON.parse makes them the code units
 * themselves): NUL, a lone high and a lone low surrogate, and the two halves of a split pair.
 */
const BAD = ['\\u0000', '\\ud800', '\\udc00', 'x\\ud83d', '\\ude00x'];

/** One text field of one endpoint: the raw body with `@` where the bad text goes, and its error path. */
interface Field {
  readonly name: string;
  readonly method: string;
  readonly path: () => string;
  readonly user: 'alice' | 'bob';
  readonly body: string;
  readonly at: string;
}

const fields = (): Field[] => {
  const key = randomUUID();
  const directive = (field: string, other = '') => `{"text": "${field === 'text' ? 'hi @' : 'hi'}"${other}${field === 'text' ? '' : `, "${field}": "x@"`}}`;
  return [
    ...['text', 'message_id', 'model', 'project', 'permission_mode', 'effort'].map((field) => ({
      name: `directive ${field} (new thread)`, method: 'POST', path: () => `${P}/threads/${key}/directives`, user: 'alice' as const,
      body: directive(field), at: `body.${field}`,
    })),
    { name: 'directive text (existing thread)', method: 'POST', path: () => `${P}/threads/${F.bobThread}/directives`, user: 'bob', body: '{"text": "go @"}', at: 'body.text' },
    { name: 'response answer', method: 'POST', path: () => `${P}/threads/${F.root}/responses`, user: 'alice',
      body: `{"responses": [{"id": "${F.question}", "answer": "main @"}]}`, at: 'body.responses.0' },
    { name: 'response option', method: 'POST', path: () => `${P}/threads/${F.root}/responses`, user: 'alice',
      body: `{"responses": [{"id": "${F.pending}", "option": "allow@"}]}`, at: 'body.responses.0' },
    { name: 'permission mode', method: 'PATCH', path: () => `${P}/conversations/${F.bobConv}/permission-mode`, user: 'bob', body: '{"permission_mode": "plan@"}', at: 'body.permission_mode' },
    { name: 'teleport channel', method: 'POST', path: () => `${P}/threads/${F.bobThread}/teleport`, user: 'bob', body: '{"destination": {"channel": "team-chat@", "id": "general"}}', at: 'body.destination.channel' },
    { name: 'teleport id', method: 'POST', path: () => `${P}/threads/${F.bobThread}/teleport`, user: 'bob', body: '{"destination": {"channel": "team-chat", "id": "general@"}}', at: 'body.destination.id' },
    { name: 'teleport prompt', method: 'POST', path: () => `${P}/threads/${F.bobThread}/teleport`, user: 'bob', body: '{"destination": {"channel": "console", "id": "new"}, "prompt": "go @"}', at: 'body.prompt' },
    { name: 'summon route', method: 'POST', path: () => `${P}/threads/${F.bobThread}/summon`, user: 'bob', body: '{"route": "codex@", "brief": "b"}', at: 'body.route' },
    { name: 'summon brief', method: 'POST', path: () => `${P}/threads/${F.bobThread}/summon`, user: 'bob', body: '{"route": "codex", "brief": "b @"}', at: 'body.brief' },
    { name: 'summon hint', method: 'POST', path: () => `${P}/threads/${F.bobThread}/summon`, user: 'bob', body: '{"route": "codex", "brief": "b", "hint": "h @"}', at: 'body.hint' },
    { name: 'a member summons on the owner thread', method: 'POST', path: () => `${P}/threads/${F.shared}/summon`, user: 'alice', body: '{"route": "codex", "brief": "x @"}', at: 'body.brief' },
    { name: 'fork text', method: 'POST', path: () => `${P}/threads/${F.bobThread}/fork`, user: 'bob', body: `{"message_id": "${F.bobMsg}", "text": "go @"}`, at: 'body.text' },
    { name: 'fork model', method: 'POST', path: () => `${P}/threads/${F.bobThread}/fork`, user: 'bob', body: `{"message_id": "${F.bobMsg}", "model": "claude@"}`, at: 'body.model' },
    { name: 'thread title', method: 'PATCH', path: () => `${P}/threads/${F.bobThread}`, user: 'bob', body: '{"title": "x @"}', at: 'body.title' },
    { name: 'session token', method: 'POST', path: () => '/api/session', user: 'alice', body: '{"token": "token-alice@"}', at: 'body.token' },
  ];
};

describe('text PostgreSQL cannot store is refused with 422 at the edge, and nothing is written', () => {
  let server: EmbeddedPostgres;
  let service: TestService;
  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    const storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
    service = await startService({}, { storage });
  });
  after(async () => {
    await service.close();
    await server.close();
  });

  const get = async (path: string, user: 'alice' | 'bob') => (await service.ask({ path, headers: as(user) })).json();

  it('on every text field of every write, for NUL, lone surrogates and split pairs', async () => {
    // The thread rows, without their activity (a run of an earlier case may end meanwhile).
    const rows = async (user: 'alice' | 'bob') => ((await get(`${P}/threads?limit=200`, user)) as { items: { activity: unknown }[] }).items.map(({ activity: _, ...row }) => row);
    const threadsBefore = [await rows('alice'), await rows('bob')];
    const ledgerBefore = await get(`${P}/threads/${F.bobThread}/messages?limit=200`, 'bob');
    const conversationsBefore = await get(`${P}/threads/${F.bobThread}/conversations`, 'bob');
    for (const field of fields()) {
      for (const bad of BAD) {
        const body = field.body.replace('@', bad);
        const res = await service.ask({ method: field.method, path: field.path(), headers: as(field.user), body });
        const where = `${field.name} with ${bad}: ${res.status} ${res.text}`;
        assert.equal(res.status, 422, where);
        assert.match(String(res.headers['content-type']), /^application\/problem\+json/, where);
        const paths = (res.json().errors as { path: string }[]).map((e) => e.path);
        assert.ok(paths.some((p) => p.startsWith(field.at)), `${where}: no error at ${field.at}`);
      }
    }
    assert.deepEqual([await rows('alice'), await rows('bob')], threadsBefore, 'no thread written');
    assert.deepEqual(await get(`${P}/threads/${F.bobThread}/messages?limit=200`, 'bob'), ledgerBefore, 'no ledger line written');
    assert.deepEqual(await get(`${P}/threads/${F.bobThread}/conversations`, 'bob'), conversationsBefore, 'no conversation written or changed');
    assert.equal((await get(`${P}/threads/${F.root}/pending`, 'alice')).length, 2, 'no pending item answered');
  });

  it('in a query or a path segment (NUL is all percent-encoding can carry: invalid UTF-8 decodes to U+FFFD)', async () => {
    for (const path of [`${P}/threads?q=deploy%00x`, `${P}/threads/${F.bobThread}/channels/team-chat/addresses?inside=gen%00eral`, `${P}/threads/${F.bobThread}/channels/team%00chat/addresses`]) {
      const res = await service.ask({ path, headers: as('bob') });
      assert.equal(res.status, 422, `${path}: ${res.text}`);
    }
  });

  it('the live socket refuses such a thread key', async () => {
    for (const key of ['a\u0000b', `${randomUUID()}\u0000`]) {
      const refused = await connectLive(service.port, { thread: key }, { authorization: 'Bearer token-alice' });
      assert.deepEqual(refused, { refused: 422 }, JSON.stringify(key));
    }
  });

  it('afterwards the thread takes a directive and its turn ends', async () => {
    const socket = (await connectLive(service.port, { thread: F.bobThread, after: '0' }, { authorization: 'Bearer token-bob' })) as LiveClient;
    const res = await service.ask({ method: 'POST', path: `${P}/threads/${F.bobThread}/directives`, headers: as('bob'), body: '{"text": "still here"}' });
    assert.equal(res.status, 202, res.text);
    await socket.until((events) => events.some((e) => e.type === 'reflex_asleep'));
    socket.close();
  });
});
