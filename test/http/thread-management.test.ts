// Issue 41 item 10, threads people can manage (contract section 4, "Managing threads"): PATCH /threads/{id}
// {title?, archived?} by the owner only; GET /threads leaves archived threads out unless `archived=true`, and
// `q` keeps the threads whose title or own ledger holds every word. Hostile input is a 4xx or a 200, never a 500.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';
import { testId } from '../support/ids.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';

interface Row { id: string; title: string; archived: boolean; owner: string }

for (const kind of storageKinds('threads')) {
  describe(`managing threads: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    before(async () => {
      opened = await kind.open();
      await opened.storage.importWorld(fixtureWorld());
      service = await startService({}, { storage: opened.storage });
    });
    after(async () => {
      await service.close();
      await opened.close();
    });

    const patch = (id: string, body: unknown, headers = ALICE) =>
      service.ask({ method: 'PATCH', path: `${P}/${id}`, headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
    const list = async (query = '', headers = ALICE): Promise<string[]> => {
      const res = await service.ask({ path: `${P}${query}`, headers });
      assert.equal(res.status, 200, `${query}: ${res.text}`);
      return (res.json() as { items: Row[] }).items.map((row) => row.id);
    };

    it('lists archived: false on every row, and the thread list shows the threads not archived', async () => {
      const res = await service.ask({ path: P, headers: ALICE });
      assert.deepEqual((res.json() as { items: Row[] }).items.map((row) => row.archived), [false, false, false, false]);
      assert.deepEqual(await list('?archived=true'), []);
      assert.equal((await service.ask({ path: `${P}/${F.root}`, headers: ALICE })).json().archived, false);
    });

    it('renames a thread for its owner, trimmed, answering the row', async () => {
      const res = await patch(F.fork, { title: '  Try the other fix \t' });
      assert.equal(res.status, 200, res.text);
      const row = res.json() as Row;
      assert.deepEqual([row.id, row.title, row.archived, row.owner], [F.fork, 'Try the other fix', false, 'alice']);
      assert.deepEqual((await service.ask({ path: `${P}/${F.fork}`, headers: ALICE })).json(), row, 'the read answers the same row');
      const longest = 'é'.repeat(200);
      assert.equal((await patch(F.fork, { title: ` ${longest} ` })).json().title, longest, '200 characters after trimming');
    });

    it('archives a thread: out of the list, in the archived list only; unarchived, back', async () => {
      const archived = await patch(F.forkOfFork, { archived: true });
      assert.equal(archived.status, 200, archived.text);
      assert.equal(archived.json().archived, true);
      assert.ok(!(await list()).includes(F.forkOfFork));
      assert.deepEqual(await list('?archived=true'), [F.forkOfFork]);
      assert.deepEqual(await list('?archived=false&limit=1&before=' + F.shared), [F.fork], 'pages skip it');
      const both = await patch(F.forkOfFork, { archived: false, title: 'Back again' });
      assert.deepEqual([both.status, both.json().archived, both.json().title], [200, false, 'Back again']);
      assert.ok((await list()).includes(F.forkOfFork));
    });

    it("refuses a member's edit with 403, and another user's thread or an unknown one with 404, whatever the body", async () => {
      const member = await patch(F.shared, { title: 'Mine now' });
      assert.deepEqual([member.status, member.json().code], [403, 'not_thread_owner']);
      assert.equal((await service.ask({ path: `${P}/${F.shared}`, headers: BOB })).json().title !== 'Mine now', true);
      for (const [id, body] of [[F.bobThread, { title: 'x' }], [F.bobThread, { nonsense: 1 }], [testId(99_999), { archived: true }], [testId(99_999), {}]] as const) {
        const res = await patch(id, body);
        assert.deepEqual([res.status, res.json().code], [404, 'thread_unavailable'], `${id} ${JSON.stringify(body)}`);
      }
      assert.equal((await patch(F.bobThread, { archived: true }, BOB)).status, 200, 'its owner may');
      assert.equal((await patch(F.bobThread, { archived: false }, BOB)).status, 200);
      const anonymous = await service.ask({ method: 'PATCH', path: `${P}/${F.root}`, headers: { 'content-type': 'application/json' }, body: '{"archived":true}' });
      assert.equal(anonymous.status, 401);
      assert.equal((await patch('not-a-uuid', { archived: true })).status, 422);
    });

    it('refuses a bad body with 400 or 422, never 500, and changes nothing', async () => {
      const before = (await service.ask({ path: `${P}/${F.root}`, headers: ALICE })).json();
      const bodies: unknown[] = [
        {}, { nonsense: true }, { title: 'ok', nonsense: true }, { title: '' }, { title: '   ' }, { title: 'x'.repeat(201) },
        { title: 5 }, { title: null }, { title: ['a'] }, { archived: 'yes' }, { archived: 1 }, { archived: null },
        { title: 'bell\u0007' }, { title: 'two\nlines' }, { title: 'del\u007f' }, { title: 'c1\u0085' }, { title: 'nul\u0000' },
        [], null, '"a string"', 42,
      ];
      for (const body of bodies) {
        const res = await patch(F.root, body);
        assert.equal(res.status, 422, `${JSON.stringify(body)}: ${res.status} ${res.text}`);
        assert.equal(res.json().code, 'validation_failed');
        assert.match(res.headers['content-type'] ?? '', /application\/problem\+json/);
      }
      for (const raw of ['{', '{"title": "\\ud800"}', 'not json']) {
        const res = await patch(F.root, raw);
        assert.ok(res.status === 400 || res.status === 422, `${raw}: ${res.status} ${res.text}`);
      }
      assert.deepEqual((await service.ask({ path: `${P}/${F.root}`, headers: ALICE })).json(), before);
    });

    it('searches titles and own ledgers for every word, as prefixes, in any case, page by page', async () => {
      assert.deepEqual(await list('?q=fix'), [F.root], 'a title');
      assert.deepEqual(await list('?q=ROOT%203'), [F.root], 'a message, in any case');
      assert.deepEqual(await list('?q=fork'), [F.forkOfFork, F.fork], 'renamed, their own messages still say fork');
      assert.deepEqual(await list('?q=fo%20of'), [F.forkOfFork], 'prefixes, every word');
      assert.deepEqual(await list(`?q=${encodeURIComponent('éé')}`), [F.fork], 'letters beyond ASCII (its title is 200 of them now)');
      assert.deepEqual(await list(`?q=fork&limit=1&before=${F.forkOfFork}`), [F.fork]);
      assert.deepEqual(await list('?q=nowhere'), []);
      assert.deepEqual(await list('?q=private'), [], "bob's private thread's text is never matched for alice");
      assert.deepEqual(await list('?q=private', BOB), [F.bobThread]);
      assert.deepEqual(await list('?q=bob'), [], "nor its title ('Bob alone')");
      assert.deepEqual(await list('?q='), await list(), 'an empty q: no search');
    });

    it('answers hostile searches with 200 or 422, never 500', async () => {
      const hostile = [
        '"', "'", '&|!:*', "' OR 1=1 --", "'; drop table threads; --", 'a:* & !b', '!(a | b) <-> c', '%', '_', '\\', '\\\\\'',
        '()', ':*', 'a:*B', 'x'.repeat(200), '日本語 Ärger', '😀', '½', '\u202e', 'word '.repeat(10),
      ];
      for (const q of hostile) {
        const res = await service.ask({ path: `${P}?q=${encodeURIComponent(q)}`, headers: ALICE });
        assert.equal(res.status, 200, `${q}: ${res.status} ${res.text}`);
      }
      for (const query of [`q=${'x'.repeat(201)}`, `q=${Array.from({ length: 11 }, (_, i) => `w${i}`).join('+')}`, 'q=a%00b', 'q=a&q=b', 'archived=maybe', 'archived=true&archived=true', `q=${'y'.repeat(100_000)}`]) {
        const res = await service.ask({ path: `${P}?${query}`, headers: ALICE });
        assert.ok(res.status === 422 || res.status === 414 || res.status === 431 || res.status === 400, `${query.slice(0, 40)}: ${res.status} ${res.text.slice(0, 200)}`);
      }
    });
  });
}
