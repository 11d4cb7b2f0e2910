// Issue 41: a merge checked, then merged, and two merges could race. N merges at once, of one thread or of
// N threads into one base, each have one winner per step: every 200 is on main, no commit is lost, nothing is
// merged twice, and a loser is a documented 409. A directive that arrives while a merge runs never starts its
// turn in the middle of it. Real repositories, the bundled demo agent, on every backend of the storage matrix.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { idleThread } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
/** How many merges are fired at once: enough to meet, bounded so a slow machine is not swamped. */
const N = 6;

for (const kind of storageKinds('merge-races')) {
  describe(`merges that race: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    let repo: string;
    before(async () => {
      repo = gitRepository();
      opened = await kind.open();
      const fixture = fixtureWorld();
      await opened.storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage });
    });
    after(async () => {
      await service.close();
      await opened.close();
      rmSync(repo, { recursive: true, force: true });
    });

    const post = (path: string, body: unknown) => service.ask({ method: 'POST', path: `${P}/${path}`, headers: ALICE, body: JSON.stringify(body) });
    const get = (path: string) => service.ask({ path: `${P}/${path}`, headers: ALICE });
    /** A new thread of alice's on the repository project, its first turn over, with `file` written in its worktree. */
    const thread = async (file: string) => {
      const res = await post(`${randomUUID()}/directives`, { text: 'Start', project: 'repo-web', model: 'claude:opus' });
      assert.equal(res.status, 202, res.text);
      const id = (res.json() as { thread_id: string }).thread_id;
      await idleThread(service.port, id, ALICE);
      const row = (await get(id)).json() as { worktree: { path: string } };
      write(row.worktree.path, file, `${file}\n`);
      return id;
    };
    const onMain = () => git(repo, 'ls-tree', '--name-only', 'main').split('\n');

    it('merges N threads into one base at once: each lands, in N commits, none lost', async () => {
      const before = Number(git(repo, 'rev-list', '--count', 'main'));
      const ids = await Promise.all(Array.from({ length: N }, (_, i) => thread(`many-${i}.txt`)));
      const answers = await Promise.all(ids.map((id, i) => post(`${id}/changes/merge`, { strategy: i % 2 === 0 ? 'squash' : 'merge' })));
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      const files = onMain();
      for (let i = 0; i < N; i += 1) assert.ok(files.includes(`many-${i}.txt`), `many-${i}.txt is on main`);
      // Each answered commit is on main, and main's checkout followed it (clean, at main).
      for (const answer of answers) git(repo, 'merge-base', '--is-ancestor', (answer.json() as { commit: string }).commit, 'main');
      assert.equal(git(repo, 'status', '--porcelain'), '');
      assert.equal(Number(git(repo, 'rev-list', '--count', '--first-parent', 'main')), before + N, 'one commit per merge on main');
    });

    it('merges one thread N times at once: merged once, the others find nothing left and answer the same base', async () => {
      const id = await thread('once.txt');
      const before = Number(git(repo, 'rev-list', '--count', '--first-parent', 'main'));
      const answers = await Promise.all(Array.from({ length: N }, () => post(`${id}/changes/merge`, { strategy: 'squash' })));
      for (const answer of answers) assert.equal(answer.status, 200, answer.text);
      assert.equal(Number(git(repo, 'rev-list', '--count', '--first-parent', 'main')), before + 1, 'merged once');
      const main = git(repo, 'rev-parse', 'main');
      for (const answer of answers) assert.equal((answer.json() as { commit: string }).commit, main);
      assert.ok(onMain().includes('once.txt'));
    });
  });
}
