import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { consoleClient, type ConsoleClient } from '../../client/index.ts';
import { F } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { startFixtureService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice' };
const BOB = { authorization: 'Bearer token-bob' };
const P = '/api/console';

/** Every read under a thread, for a thread id (and the run and conversation ids under it). */
const readsUnder = (thread: string, conversation: string, run: string) => [
  `${P}/threads/${thread}`,
  `${P}/threads/${thread}/messages`,
  `${P}/threads/${thread}/conversations`,
  `${P}/threads/${thread}/conversations/${conversation}/runs`,
  `${P}/threads/${thread}/runs/${run}/messages`,
  `${P}/threads/${thread}/pending`,
];

describe('console reads', () => {
  let service: TestService;
  /** The typed client (generated from the OpenAPI description) as alice and as bob; raw requests check the edges. */
  let alice: ConsoleClient;
  let bob: ConsoleClient;
  before(async () => {
    service = await startFixtureService();
    // Reads never wait on an agent: what each offers is known first.
    await service.knowOffers();
    const base = `http://127.0.0.1:${service.port}`;
    alice = consoleClient(base, { headers: ALICE });
    bob = consoleClient(base, { headers: BOB });
  });
  after(() => service.close());

  const get = (path: string, headers: Record<string, string> = ALICE) => service.ask({ path, headers });

  it('needs a user on every read', async () => {
    for (const path of [`${P}/routes`, `${P}/channels`, `${P}/projects`, `${P}/permissions`, `${P}/threads`, ...readsUnder(F.root, F.conv, F.runs[0])]) {
      const res = await get(path, {});
      assert.equal(res.status, 401, path);
      assert.equal(res.headers['www-authenticate'], 'Bearer');
    }
  });

  it('GET /routes: the console channel agents with their models', async () => {
    assert.deepEqual((await alice.GET('/api/console/routes')).data, [
      { id: 'claude:opus', agent: 'claude', model: 'opus' },
      { id: 'claude:sonnet', agent: 'claude', model: 'sonnet' },
      { id: 'codex', agent: 'codex', model: null },
    ]);
  });

  it('GET /channels: the channels linked to the caller only', async () => {
    assert.deepEqual((await alice.GET('/api/console/channels')).data, [
      { id: 'console', kind: 'console', name: 'Console', shared: false, browsable: false },
      { id: 'quiet', kind: 'chat', name: 'Quiet room', shared: true, browsable: true },
      { id: 'team-chat', kind: 'chat', name: 'Team chat', shared: true, browsable: true },
    ]);
    assert.deepEqual((await bob.GET('/api/console/channels')).data?.map((c) => c.id), ['console']);
  });

  it('GET /projects and /permissions', async () => {
    assert.deepEqual((await alice.GET('/api/console/projects')).data, ['acme-web', 'infra']);
    assert.deepEqual((await alice.GET('/api/console/permissions')).data, [
      { agent: 'claude', modes: ['default', 'acceptEdits', 'plan'], default: 'default', efforts: ['low', 'high'], unavailable: null, steering: true },
      { agent: 'codex', modes: ['auto', 'read-only'], default: 'auto', efforts: [], unavailable: null, steering: false },
    ]);
  });

  it('GET /threads pages what the caller can access, newest first', async () => {
    const first = (await alice.GET('/api/console/threads', { params: { query: { limit: '3' } } })).data!;
    assert.deepEqual(first.items.map((t) => t.id), [F.shared, F.forkOfFork, F.fork]);
    assert.equal(first.next, F.fork);
    const rest = (await alice.GET('/api/console/threads', { params: { query: { limit: '3', before: first.next! } } })).data!;
    assert.deepEqual(rest, { items: [rest.items[0]], next: null });
    assert.equal(rest.items[0]!.id, F.root);
    assert.equal((rest.items[0] as Record<string, unknown>).messages, undefined, 'a listing carries no messages');
    // The fixture's running turn has no lease, so the start-up sweep may have ended it already.
    const activity = rest.items[0]!.activity;
    assert.deepEqual({ ...activity, turn_running: typeof activity.turn_running }, { turn_running: 'boolean', approvals: 1, questions: 1, queued: 0 }, 'each with its activity');
  });

  it('GET /threads/{id}: the row, without messages', async () => {
    const res = await alice.GET('/api/console/threads/{id}', { params: { path: { id: F.root } } });
    assert.equal(res.response.status, 200);
    assert.deepEqual(res.data, {
      id: F.root, key: null, channel: 'console', owner: 'alice', project: 'acme-web', title: 'Fix the build',
      fork_of: null, fork_cutoff: null, created_at: '2026-01-01T00:00:01.000Z', worktree: null, archived: false,
    });
  });

  it('GET /threads/{id}/messages: the ledger, a fork sees its parent up to its cutoff', async () => {
    const messages = (query: { limit: string; before?: string }) => alice.GET('/api/console/threads/{id}/messages', { params: { path: { id: F.fork }, query } });
    const res = (await messages({ limit: '4' })).data!;
    assert.deepEqual(res.items.map((m) => m.id), [F.forkMsgs[1], F.forkMsgs[0], F.rootMsgs[2], F.rootMsgs[1]]);
    assert.equal(res.next, F.rootMsgs[1]);
    const rest = (await messages({ limit: '4', before: res.next! })).data!;
    assert.deepEqual(rest.items.map((m) => m.id), [F.rootMsgs[0]]);
    assert.equal(rest.next, null);
  });

  it('GET conversations, runs, model messages and pending', async () => {
    const conversations = (await alice.GET('/api/console/threads/{id}/conversations', { params: { path: { id: F.root } } })).data!;
    assert.deepEqual(conversations.map((c) => c.id), [F.conv, F.conv2]);
    const runs = (await alice.GET('/api/console/threads/{id}/conversations/{cid}/runs', { params: { path: { id: F.root, cid: F.conv }, query: { limit: '2' } } })).data!;
    assert.deepEqual(runs.items.map((r) => r.id), [F.runs[2], F.runs[1]]);
    const messages = (await alice.GET('/api/console/threads/{id}/runs/{rid}/messages', { params: { path: { id: F.root, rid: F.runs[0] } } })).data!;
    assert.equal(messages.items.length, 4);
    const pending = (await alice.GET('/api/console/threads/{id}/pending', { params: { path: { id: F.root } } })).data!;
    assert.deepEqual(pending.map((p) => p.kind), ['approval', 'question']);
  });

  it('accepts ids in upper case', async () => {
    assert.equal((await get(`${P}/threads/${F.root.toUpperCase()}`)).status, 200);
  });

  it('a member reads a thread shared with them', async () => {
    assert.equal((await get(`${P}/threads/${F.shared}`)).status, 200);
  });

  it('cross-user: every read of another user thread is 404 Thread unavailable and leaks nothing', async () => {
    const bobRow = (await get(`${P}/threads/${F.bobThread}`, BOB)).json();
    for (const path of readsUnder(F.bobThread, F.bobConv, F.bobRun)) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      const body = res.json();
      assert.equal(body.detail, 'Thread unavailable');
      for (const secret of [bobRow.title, 'private', '/srv/bob', F.bobConv, F.bobRun]) assert.ok(!res.text.includes(secret), `${path} leaks ${secret}`);
    }
    const unknown = testId(77_777);
    for (const path of readsUnder(unknown, unknown, unknown)) {
      const res = await get(path);
      assert.equal(res.status, 404, path);
      assert.equal(res.json().detail, 'Thread unavailable');
    }
  });

  it('another thread conversation or run under an accessible thread is 404', async () => {
    const runs = await get(`${P}/threads/${F.root}/conversations/${F.bobConv}/runs`);
    assert.equal(runs.status, 404);
    assert.equal(runs.json().detail, 'Conversation unavailable');
    const messages = await get(`${P}/threads/${F.root}/runs/${F.bobRun}/messages`);
    assert.equal(messages.status, 404);
    assert.equal(messages.json().detail, 'Run unavailable');
    assert.ok(!messages.text.includes('/srv/bob'));
    assert.equal((await get(`${P}/threads/${F.fork}/runs/${F.runs[0]}/messages`)).status, 404);
  });

  it('422 for a path id that is not a UUID, and for a bad limit or cursor', async () => {
    for (const path of [
      `${P}/threads/not-a-uuid`, `${P}/threads/${F.root}/runs/123/messages`, `${P}/threads?limit=0`, `${P}/threads?limit=201`,
      `${P}/threads?limit=abc`, `${P}/threads?before=yesterday`, `${P}/threads/${F.root}/messages?limit=1&limit=2`,
    ]) {
      const res = await get(path);
      assert.equal(res.status, 422, path);
      assert.ok(res.json().errors.length > 0, path);
    }
  });

  it('404 for an unknown console path; 405 for a write on a read', async () => {
    assert.equal((await get(`${P}/nothing`)).status, 404);
    const res = await service.ask({ method: 'DELETE', path: `${P}/threads/${F.root}`, headers: ALICE });
    assert.equal(res.status, 405);
    assert.equal(res.headers.allow, 'GET, HEAD, PATCH', 'the thread row is read, or changed by PATCH (managing threads)');
  });
});
