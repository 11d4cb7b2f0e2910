import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Storage } from '../../ports/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds } from '../support/storage-kinds.ts';

/**
 * The spec's read rule, per read over HTTP: each resolves exactly what it answers. Recorded at the
 * ports (every adapter: which thread and conversation reads a request made) and, on the databases, in
 * the statements sent (a row-only read never runs the recursive ancestor scan).
 */
interface Recorded {
  readonly calls: string[];
  readonly sql: string[];
}

/** Wraps the thread and conversation stores so every call is recorded by name. */
function recording(storage: Storage, recorded: Recorded): Storage {
  const spy = <T extends object>(store: T, prefix: string): T =>
    new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          recorded.calls.push(`${prefix}.${String(name)}`);
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  return { ...storage, threads: spy(storage.threads, 'threads'), conversations: spy(storage.conversations, 'conversations') };
}

const kinds = storageKinds('console_reads');

const RECURSIVE = /\bwith\s+recursive\b/i;
const ALICE = { authorization: 'Bearer token-alice' };

for (const kind of kinds) {
  describe(`reads resolve what they answer (${kind.name})`, () => {
    const recorded: Recorded = { calls: [], sql: [] };
    let service: TestService;
    let close: () => Promise<void>;

    before(async () => {
      const opened = await kind.open((sql) => recorded.sql.push(sql));
      close = opened.close;
      await opened.storage.importWorld(fixtureWorld());
      service = await startService({ TURN_LEASE_MS: '3600000' }, { storage: recording(opened.storage, recorded) });
      // The sweep at start is waited out, so what is recorded is the request's alone.
      await new Promise((resolve) => setTimeout(resolve, 300));
    });
    after(async () => {
      await service.close();
      await close();
    });

    const request = async (method: string, path: string, body?: unknown, status?: number): Promise<Recorded> => {
      recorded.calls.length = 0;
      recorded.sql.length = 0;
      const res = await service.ask({ method, path, headers: { ...ALICE, ...(body === undefined ? {} : { 'content-type': 'application/json' }) }, body: body === undefined ? undefined : JSON.stringify(body) });
      if (status !== undefined) assert.equal(res.status, status, `${method} ${path}: ${res.text}`);
      return { calls: [...recorded.calls], sql: [...recorded.sql] };
    };

    it('the row-only reads resolve the thread row alone: no fork chain, no recursive scan (a regression: each walked the ancestors)', async () => {
      for (const path of [
        `/api/console/threads/${F.forkOfFork}`,
        `/api/console/threads/${F.forkOfFork}/conversations`,
        `/api/console/threads/${F.root}/conversations/${F.conv}/runs`,
        `/api/console/threads/${F.root}/runs/${F.runs[0]}/messages`,
        `/api/console/threads/${F.forkOfFork}/pending`,
        `/api/console/threads/${F.forkOfFork}/operations`,
      ]) {
        const { calls, sql } = await request('GET', path, undefined, 200);
        assert.ok(calls.includes('threads.findRow'), `${path}: ${calls.join(', ')}`);
        assert.ok(!calls.includes('threads.findAccessible'), `${path} resolved the fork chain`);
        assert.ok(!sql.some((s) => RECURSIVE.test(s)), `${path} ran a recursive scan`);
      }
    });

    it('the ledger read, and only it, resolves the fork chain', async () => {
      const { calls, sql } = await request('GET', `/api/console/threads/${F.forkOfFork}/messages`, undefined, 200);
      assert.deepEqual(calls.filter((c) => c.startsWith('threads.')), ['threads.findAccessible']);
      if (kind.name !== 'memory') assert.equal(sql.filter((s) => RECURSIVE.test(s)).length, 1);
    });

    it('the destination listing reads neither conversations nor pending items (a regression: it loaded both)', async () => {
      const { calls } = await request('GET', `/api/console/threads/${F.root}/channels/team-chat/addresses`, undefined, 200);
      assert.deepEqual(calls, ['threads.findRow']);
    });

    it("a directive finds the thread's latest conversation by one probe, not the list (a regression: it listed them all)", async () => {
      const { calls } = await request('POST', `/api/console/threads/${F.root}/directives`, { text: 'hello' });
      // The row and its latest conversation in one read (ThreadStore.findRowWithLatest), not the row, then the latest.
      assert.ok(calls.includes('threads.findRowWithLatest'), calls.join(', '));
      assert.ok(!calls.includes('conversations.latestByThread') && !calls.includes('threads.findRow'), calls.join(', '));
      assert.ok(!calls.includes('conversations.listByThread'), calls.join(', '));
      assert.ok(!calls.includes('threads.findAccessible'), calls.join(', '));
      // The run it started reads the ledger's history in the background (a fresh session): waited out, so
      // the next request records its own calls alone.
      for (let waited = 0; waited < 20_000; waited += 50) {
        const res = await service.ask({ path: `/api/console/threads/${F.root}/conversations`, headers: ALICE });
        if (!res.json().some((c: { turn_running: boolean }) => c.turn_running)) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });

    it('the posture PATCH checks the owner on the row alone (a regression: it re-read the fork chain)', async () => {
      const { calls, sql } = await request('PATCH', `/api/console/conversations/${F.conv}/permission-mode`, { permission_mode: 'plan' });
      assert.ok(!calls.includes('threads.findAccessible'), calls.join(', '));
      assert.ok(!sql.some((s) => RECURSIVE.test(s)));
    });

    it('an unknown or inaccessible thread is 404 before any check of what the body names (a regression: 422 came first)', async () => {
      for (const thread of [F.bobThread, '0190a4c4-0000-7000-8000-00000000dead']) {
        await request('POST', `/api/console/threads/${thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' }, new_thread: true, prompt: 'go' }, 404);
        await request('POST', `/api/console/threads/${thread}/teleport`, { destination: { channel: 'console', id: 'new' }, new_thread: false, prompt: null }, 404);
        await request('POST', `/api/console/threads/${thread}/directives`, { text: 'hi', model: 'nobody:nothing', project: 'no-such-project' }, F.bobThread === thread ? 404 : 422);
      }
    });

    it('an unknown or inaccessible thread is 404 whatever the body: a field of the wrong type, or no JSON at all (issue 24: 422 came first)', async () => {
      const T = '/api/console/threads';
      for (const thread of [F.bobThread, '0190a4c4-0000-7000-8000-00000000dead']) {
        await request('POST', `${T}/${thread}/teleport`, { destination: { channel: 'team-chat', id: 'general' }, new_thread: 'yes' }, 404);
        await request('POST', `${T}/${thread}/teleport`, { destination: 'general' }, 404);
        await request('POST', `${T}/${thread}/summon`, { route: 5, brief: 'x' }, 404);
        await request('POST', `${T}/${thread}/responses`, { responses: 'all of them' }, 404);
        await request('GET', `${T}/${thread}/channels/team-chat/addresses?inside=a&inside=b`, undefined, 404);
        const notJson = await service.ask({ method: 'POST', path: `${T}/${thread}/teleport`, headers: { ...ALICE, 'content-type': 'application/json' }, body: '{"destination":' });
        assert.equal(notJson.status, 404, notJson.text);
        assert.equal(notJson.json().code, 'thread_unavailable');
        assert.equal(notJson.headers['content-type'], 'application/problem+json');
      }
      // A directive's id that is no thread row is a key of the caller's: a new thread, whose body is checked (422).
      await request('POST', `${T}/${F.bobThread}/directives`, { text: 5 }, 404);
      await request('POST', `${T}/0190a4c4-0000-7000-8000-00000000dead/directives`, { text: 5 }, 422);
      // Another user's conversation, whatever the body.
      await request('PATCH', `/api/console/conversations/${F.bobConv}/permission-mode`, { permission_mode: 5 }, 404);
      // The caller's own thread and conversation: the body's refusal stands.
      await request('POST', `${T}/${F.root}/teleport`, { destination: 'general' }, 422);
      await request('POST', `${T}/${F.root}/summon`, { route: 5, brief: 'x' }, 422);
      await request('POST', `${T}/${F.root}/responses`, { responses: 'all of them' }, 422);
      await request('POST', `${T}/${F.root}/directives`, { text: 5 }, 422);
      await request('PATCH', `/api/console/conversations/${F.conv}/permission-mode`, { permission_mode: 5 }, 422);
      const ownNotJson = await service.ask({ method: 'POST', path: `${T}/${F.root}/summon`, headers: { ...ALICE, 'content-type': 'application/json' }, body: '{' });
      assert.equal(ownNotJson.status, 400, ownNotJson.text);
    });
  });
}
