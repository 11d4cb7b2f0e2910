// CONTRACT section 12, "Hooks in", over HTTP: hooks created, listed and removed by their owner; a call with
// the hook's secret sends a directive as the owner, once per idempotency key for 24 hours; wrong secrets
// are throttled as every credential is; bad input is a clear problem+json.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { emptyState } from '../../adapters/memory/state.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { HOOK_KEY_WINDOW_MS } from '../../core/automation/hooks.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { idleThread, type Answer } from '../support/http.ts';
import { manualClock } from '../support/manual-clock.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const H = '/api/console/hooks';
const LIMIT = 3;

const problemOf = (res: Answer, status: number, code: string) => {
  assert.equal(res.status, status, res.text);
  assert.equal(res.headers['content-type'], 'application/problem+json', res.text);
  assert.equal(res.json().code, code, res.text);
};

describe('hooks in', () => {
  let service: TestService;
  const state = emptyState();
  const clock = manualClock(Date.UTC(2026, 5, 1));
  before(async () => {
    const storage = createMemoryStorage(state);
    await storage.importWorld(fixtureWorld());
    service = await startService({ TRUST_PROXY: 'true', SIGNIN_ATTEMPTS_PER_MINUTE: String(LIMIT), DIRECTIVES_PER_MINUTE: '100000' }, { storage, clock });
  });
  after(() => service.close());

  const post = (path: string, body: unknown, headers: Record<string, string> = ALICE) =>
    service.ask({ method: 'POST', path, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  /** A new hook of alice's (or `headers`'s user) and its secret. */
  const newHook = async (body: unknown = {}, headers = ALICE) => {
    const res = await post(H, body, headers);
    assert.equal(res.status, 201, res.text);
    return res.json() as { id: string; url: string; secret: string; thread_id: string | null; project: string | null; model: string | null };
  };
  /** A call of a hook from client `from` (its address, under TRUST_PROXY). */
  const call = (id: string, secret: string | null, body: unknown, from = '198.51.100.1') =>
    post(`/api/hooks/${id}`, body, { 'content-type': 'application/json', 'x-forwarded-for': from, ...(secret === null ? {} : { authorization: `Bearer ${secret}` }) });

  it('a hook is created with its URL and a secret shown once, listed without it, and removed by its owner only', async () => {
    const hook = await newHook({ project: 'acme-web', model: 'claude:sonnet' });
    assert.match(hook.secret, /^chook_[A-Za-z0-9_-]{43}$/);
    assert.equal(hook.url, `http://127.0.0.1:${service.port}/api/hooks/${hook.id}`, "on the origin the request came to");
    assert.deepEqual([hook.thread_id, hook.project, hook.model], [null, 'acme-web', 'claude:sonnet']);
    const listed = (await service.ask({ path: H, headers: ALICE })).json() as Record<string, unknown>[];
    const mine = listed.find((h) => h.id === hook.id)!;
    assert.ok(mine !== undefined);
    assert.equal(mine.secret, undefined, 'never listed with its secret');
    assert.ok(!JSON.stringify(listed).includes(hook.secret));
    assert.equal(mine.url, hook.url);
    assert.ok(!((await service.ask({ path: H, headers: BOB })).json() as { id: string }[]).some((h) => h.id === hook.id), "not in bob's list");
    problemOf(await service.ask({ method: 'DELETE', path: `${H}/${hook.id}`, headers: BOB }), 404, 'hook_not_found');
    assert.equal((await service.ask({ method: 'DELETE', path: `${H}/${hook.id}`, headers: ALICE })).status, 204);
    problemOf(await service.ask({ method: 'DELETE', path: `${H}/${hook.id}`, headers: ALICE }), 404, 'hook_not_found');
    problemOf(await call(hook.id, hook.secret, { text: 'after removal' }), 401, 'unauthenticated');
  });

  it('bad hooks are refused: a thread the caller cannot use 404, a project not offered or a project with a thread 422', async () => {
    problemOf(await post(H, { thread_id: F.bobThread }), 404, 'thread_unavailable');
    problemOf(await post(H, { project: 'nowhere' }), 422, 'validation_failed');
    problemOf(await post(H, { thread_id: F.root, model: 'claude:sonnet' }), 422, 'validation_failed');
    problemOf(await post(H, { thread_id: 'not-a-uuid' }), 422, 'validation_failed');
    problemOf(await post(H, '{"project":'), 400, 'malformed_json');
    problemOf(await post(H, {}, { 'content-type': 'application/json' }), 401, 'unauthenticated');
    // A member may hook a thread shared with them (a member's directive queues).
    assert.equal((await post(H, { thread_id: F.shared })).status, 201);
  });

  it('a call sends a directive as the owner to a new thread each time, with the hook\'s project and model', async () => {
    const hook = await newHook({ project: 'acme-web', model: 'claude:sonnet' });
    const first = await call(hook.id, hook.secret, { text: 'Deploy finished' });
    assert.equal(first.status, 202, first.text);
    const answer = first.json();
    assert.deepEqual(Object.keys(answer).sort(), ['conversation_id', 'key', 'run_id', 'thread_id']);
    await idleThread(service.port, answer.thread_id, ALICE);
    const thread = (await service.ask({ path: `/api/console/threads/${answer.thread_id}`, headers: ALICE })).json();
    assert.equal(thread.owner, 'alice');
    assert.equal(thread.project, 'acme-web');
    const conversations = (await service.ask({ path: `/api/console/threads/${answer.thread_id}/conversations`, headers: ALICE })).json();
    assert.deepEqual([conversations[0].agent, conversations[0].model], ['claude', 'sonnet']);
    const ledger = (await service.ask({ path: `/api/console/threads/${answer.thread_id}/messages`, headers: ALICE })).json();
    assert.ok(ledger.items.some((m: { role: string; text: string }) => m.role === 'user' && m.text === 'Deploy finished'));
    const second = await call(hook.id, hook.secret, { text: 'Deploy finished' });
    assert.equal(second.status, 202, second.text);
    assert.notEqual(second.json().thread_id, answer.thread_id, 'without a key, each call is a new thread');
    await idleThread(service.port, second.json().thread_id, ALICE);
  });

  it('the same idempotency_key, at once or later within 24 hours, answers the first answer and runs once; after 24 hours it runs again', async () => {
    const hook = await newHook();
    const body = { text: 'Once', idempotency_key: 'build-1234' };
    const answers = await Promise.all([call(hook.id, hook.secret, body), call(hook.id, hook.secret, body), call(hook.id, hook.secret, body)]);
    for (const res of answers) assert.equal(res.status, 202, res.text);
    const first = answers[0]!.json();
    for (const res of answers) assert.deepEqual(res.json(), first);
    await idleThread(service.port, first.thread_id, ALICE);
    await clock.advance(HOOK_KEY_WINDOW_MS - 1);
    assert.deepEqual((await call(hook.id, hook.secret, body)).json(), first, 'within 24 hours');
    const runs = (await service.ask({ path: `/api/console/threads/${first.thread_id}/conversations/${first.conversation_id}/runs`, headers: ALICE })).json();
    assert.equal(runs.items.length, 1, 'one run');
    const ledger = (await service.ask({ path: `/api/console/threads/${first.thread_id}/messages`, headers: ALICE })).json();
    assert.equal(ledger.items.filter((m: { role: string }) => m.role === 'user').length, 1, 'one directive');
    // Another key, or another hook with the same key, is another call.
    const other = await call(hook.id, hook.secret, { ...body, idempotency_key: 'build-1235' });
    assert.notEqual(other.json().thread_id, first.thread_id);
    await idleThread(service.port, other.json().thread_id, ALICE);
    await clock.advance(1);
    const later = await call(hook.id, hook.secret, body);
    assert.equal(later.status, 202, later.text);
    assert.notEqual(later.json().thread_id, first.thread_id, 'after 24 hours the key runs again');
    await idleThread(service.port, later.json().thread_id, ALICE);
  });

  it('a hook to a thread sends there, queued when busy; it stops when its owner can no longer use the thread', async () => {
    // A thread of bob's shared with alice: alice's hook queues on it as a member.
    const key = randomUUID();
    const made = await post(`/api/console/threads/${key}/directives`, { text: 'Start' }, BOB);
    assert.equal(made.status, 202, made.text);
    const threadId = made.json().thread_id as string;
    await idleThread(service.port, threadId, BOB);
    state.members.set(threadId, new Set(['alice']));
    const hook = await newHook({ thread_id: threadId });
    const sent = await call(hook.id, hook.secret, { text: 'From the hook', idempotency_key: 'k1' });
    assert.equal(sent.status, 202, sent.text);
    assert.equal(sent.json().thread_id, threadId);
    assert.deepEqual((await call(hook.id, hook.secret, { text: 'From the hook', idempotency_key: 'k1' })).json(), sent.json());
    await idleThread(service.port, threadId, BOB);
    // Alice is no longer a member: the hook's calls are refused as her directive would be.
    state.members.set(threadId, new Set());
    problemOf(await call(hook.id, hook.secret, { text: 'Too late' }), 404, 'thread_unavailable');
  });

  it('bad calls: one 401 for no secret, a wrong one or no such hook; the secret before the body; 400 bad JSON; 422 no text or too long', async () => {
    const hook = await newHook();
    const from = '198.51.100.50';
    const unknown = await call(randomUUID(), hook.secret, { text: 'x' }, from);
    const wrong = await call(hook.id, 'chook_wrong', { text: 'x' }, from);
    problemOf(unknown, 401, 'unauthenticated');
    problemOf(wrong, 401, 'unauthenticated');
    assert.equal(unknown.text, wrong.text, 'no oracle: an unknown hook and a wrong secret answer alike');
    assert.equal(wrong.headers['www-authenticate'], 'Bearer');
    problemOf(await call(hook.id, null, { text: 'x' }, from), 401, 'unauthenticated');
    problemOf(await call(hook.id, 'chook_wrong', '{"text":', '198.51.100.51'), 401, 'unauthenticated');
    problemOf(await call(hook.id, hook.secret, '{"text":', from), 400, 'malformed_json');
    problemOf(await call(hook.id, hook.secret, {}, from), 422, 'validation_failed');
    problemOf(await call(hook.id, hook.secret, { text: '   ' }, from), 422, 'validation_failed');
    problemOf(await call(hook.id, hook.secret, { text: 'x'.repeat(100_001) }, from), 422, 'validation_failed');
    problemOf(await call(hook.id, hook.secret, { text: 'x', idempotency_key: '' }, from), 422, 'validation_failed');
    problemOf(await call(hook.id, hook.secret, { text: 'x', idempotency_key: 'x'.repeat(201) }, from), 422, 'validation_failed');
  });

  it('wrong secrets are throttled with 429 per client, as every credential; the right one from another client still works', async () => {
    const hook = await newHook();
    const from = '198.51.100.77';
    for (let i = 0; i < LIMIT; i += 1) problemOf(await call(hook.id, `chook_guess${i}`, { text: 'x' }, from), 401, 'unauthenticated');
    const refused = await call(hook.id, hook.secret, { text: 'x' }, from);
    problemOf(refused, 429, 'too_many_sign_ins');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    const elsewhere = await call(hook.id, hook.secret, { text: 'from elsewhere' }, '198.51.100.78');
    assert.equal(elsewhere.status, 202, elsewhere.text);
    await idleThread(service.port, elsewhere.json().thread_id, ALICE);
  });

  it("a deactivated owner's hook is refused 403 and sends nothing; a personal access token cannot create hooks", async () => {
    const hook = await newHook({}, BOB);
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', headers: ALICE, body: '{"active":false}' })).status, 200);
    problemOf(await call(hook.id, hook.secret, { text: 'x' }), 403, 'hook_owner_inactive');
    assert.equal((await service.ask({ method: 'PATCH', path: '/api/admin/users/bob', headers: ALICE, body: '{"active":true}' })).status, 200);
    const token = (await post('/api/account/tokens', { name: 'script' })).json().token as string;
    problemOf(await post(H, {}, { authorization: `Bearer ${token}`, 'content-type': 'application/json' }), 403, 'credential_not_allowed');
  });
});
