// Issue 39, checkpoints: a thread on a repository project has its worktree's state recorded before its first
// turn and after every turn, on refs/console/checkpoints/<thread>/<run>, listed by GET /threads/{id}/checkpoints.
// A real repository in a temporary directory, the bundled demo agent, on the storage kinds of the tier.
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
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';

interface Checkpoint {
  run_id: string | null;
  message_id: string | null;
  commit: string;
  created_at: string;
  files_changed: number;
}

for (const kind of storageKinds('checkpoints')) {
  describe(`checkpoints of a thread's worktree: ${kind.name}`, () => {
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

    const send = (ref: string, body: Record<string, unknown>) =>
      service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    const get = (path: string, headers = ALICE) => service.ask({ path: `${P}/${path}`, headers });
    const idle = (threadId: string) => idleThread(service.port, threadId, ALICE);
    /** A turn on thread `ref`, over; `opens`: a new key, a new thread on the repository project. */
    const turn = async (ref: string, text: string, opens = false) => {
      const res = await send(ref, opens ? { text, project: 'repo-web', model: 'claude:opus' } : { text });
      assert.equal(res.status, 202, res.text);
      const answer = res.json() as { thread_id: string; run_id: string };
      await idle(answer.thread_id);
      return answer;
    };
    /** The ledger message of the user's directive with `text`. */
    const messageOf = async (threadId: string, text: string) =>
      ((await get(`${threadId}/messages?limit=50`)).json().items as { id: string; role: string; text: string }[]).find((m) => m.role === 'user' && m.text === text)?.id;

    it('lists the checkpoint before the first turn and one after each turn, with their directive messages and the files each changed', async () => {
      const first = await turn(randomUUID(), 'Start', true);
      const id = first.thread_id;
      const { worktree } = (await get(id)).json() as { worktree: { path: string; branch: string } };
      // Between the turns, the worktree changes: a file modified, one deleted, one added, one ignored.
      write(worktree.path, 'src/app.js', 'rewritten\n');
      rmSync(`${worktree.path}/remove-me.txt`);
      write(worktree.path, 'added.txt', 'new\n');
      write(worktree.path, 'ignored.log', 'left out\n');
      write(worktree.path, '.gitignore', '*.log\n');
      const statusBefore = git(worktree.path, 'status', '--porcelain', '--untracked-files=all');
      const second = await turn(id, 'Second');
      assert.equal(git(worktree.path, 'status', '--porcelain', '--untracked-files=all'), statusBefore, "the worktree's status is as the turn left it");

      const res = await get(`${id}/checkpoints`);
      assert.equal(res.status, 200, res.text);
      const checkpoints = res.json() as Checkpoint[];
      assert.deepEqual(checkpoints.map((c) => [c.run_id, c.message_id, c.files_changed]), [
        [null, null, 0],
        [first.run_id, await messageOf(id, 'Start'), 0],
        [second.run_id, await messageOf(id, 'Second'), 4],
      ]);
      assert.ok(checkpoints.every((c) => /^[0-9a-f]{40}$/.test(c.commit) && !Number.isNaN(Date.parse(c.created_at))));
      assert.equal(git(repo, 'rev-parse', `refs/console/checkpoints/${id}/base`), checkpoints[0]!.commit);
      assert.equal(git(repo, 'rev-parse', `refs/console/checkpoints/${id}/${second.run_id}`), checkpoints[2]!.commit);
      assert.equal(git(repo, 'rev-parse', `${checkpoints[2]!.commit}^`), checkpoints[1]!.commit, 'each the child of the one before');
      assert.equal(git(repo, 'show', `${checkpoints[2]!.commit}:src/app.js`), 'rewritten');
      assert.doesNotMatch(git(repo, 'ls-tree', '-r', '--name-only', checkpoints[2]!.commit), /ignored\.log|remove-me\.txt/);

      assert.equal((await get(`${id}/checkpoints`, BOB)).status, 404, 'read by whoever can read the thread, 404 otherwise');
      assert.equal((await get(`${id}/checkpoints`, BOB)).json().code, 'thread_unavailable');
    });

    it('answers [] for a thread whose project is no repository', async () => {
      const res = await send(randomUUID(), { text: 'Plain', model: 'claude:opus' });
      assert.equal(res.status, 202, res.text);
      const { thread_id: id } = res.json() as { thread_id: string };
      await idle(id);
      const listed = await get(`${id}/checkpoints`);
      assert.equal(listed.status, 200, listed.text);
      assert.deepEqual(listed.json(), []);
    });

    it('never fails a turn: a worktree git cannot read still ends its turn normally, and the checkpoint is logged as missing', async () => {
      const first = await turn(randomUUID(), 'Start', true);
      const id = first.thread_id;
      const { worktree } = (await get(id)).json() as { worktree: { path: string } };
      // A path git refuses to add: every checkpoint of the worktree fails.
      write(worktree.path, '.GIT/config', '[core]\n');
      const second = await turn(id, 'Unreadable');
      const runs = (await get(`${id}/conversations`)).json() as { id: string }[];
      const listed = (await get(`${id}/conversations/${runs[0]!.id}/runs?limit=10`)).json().items as { id: string; status: string }[];
      assert.equal(listed.find((run) => run.id === second.run_id)?.status, 'succeeded');
      assert.ok(service.logs.some((line) => line.msg === 'the checkpoint of a turn could not be recorded' && line.run === second.run_id && line.code === 'worktree_unreadable'));
      const checkpoints = (await get(`${id}/checkpoints`)).json() as Checkpoint[];
      assert.deepEqual(checkpoints.map((c) => c.run_id), [null, first.run_id], 'the failed one is missing, the others stay');
    });
  });
}
