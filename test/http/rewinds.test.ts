// Issue 39, rewind: POST /threads/{id}/rewind {run_id} takes a run and every later one back (kept, read
// `rewound: true`), puts a repository thread's worktree back to the checkpoint before that run (files, branch,
// index; ignored files left alone), and the agent's next turn starts a new session from a brief of what is left.
// Refused while a turn runs or anything waits; a retry answers the same. A real repository in a temporary
// directory, the bundled demo agent, on the storage kinds of the tier.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { idleThread } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';

interface RunRow { id: string; status: string; rewound: boolean }

for (const kind of storageKinds('rewinds')) {
  describe(`rewind a thread to before a run: ${kind.name}`, () => {
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
    const rewind = (threadId: string, runId: string, headers = ALICE) =>
      service.ask({ method: 'POST', path: `${P}/${threadId}/rewind`, headers, body: JSON.stringify({ run_id: runId }) });
    const idle = (threadId: string) => idleThread(service.port, threadId, ALICE);
    const turn = async (ref: string, text: string, opens: Record<string, unknown> | null = null) => {
      const res = await send(ref, opens === null ? { text } : { text, model: 'claude:opus', ...opens });
      assert.equal(res.status, 202, res.text);
      const answer = res.json() as { thread_id: string; run_id: string; conversation_id: string };
      await idle(answer.thread_id);
      return answer;
    };
    const runsOf = async (threadId: string, conversationId: string) =>
      ((await get(`${threadId}/conversations/${conversationId}/runs?limit=50`)).json().items as RunRow[]).reverse();
    const ledger = async (threadId: string) =>
      ((await get(`${threadId}/messages?limit=100`)).json().items as { role: string; text: string }[]).reverse();

    it('puts the files, branch and index back to before the run, marks it and the later runs rewound, and the next turn starts from what is left', async () => {
      const first = await turn(randomUUID(), 'Start', { project: 'repo-web' });
      const id = first.thread_id;
      const { worktree } = (await get(id)).json() as { worktree: { path: string; branch: string } };
      const tipBefore = git(worktree.path, 'rev-parse', 'HEAD');
      write(worktree.path, 'ignored.log', 'kept whatever happens\n');
      write(worktree.path, '.gitignore', '*.log\n');
      write(worktree.path, 'kept.txt', 'from before the rewound run\n');
      const second = await turn(id, 'Second');
      // What the rewound runs did: a file changed, one deleted, one added and committed on the branch, one untracked.
      write(worktree.path, 'src/app.js', 'rewritten by a rewound run\n');
      rmSync(join(worktree.path, 'remove-me.txt'));
      write(worktree.path, 'committed.txt', 'committed by a rewound run\n');
      git(worktree.path, 'add', 'committed.txt');
      git(worktree.path, '-c', 'user.email=agent@example.com', '-c', 'user.name=Agent', 'commit', '-qm', 'agent work');
      const rewoundTip = git(worktree.path, 'rev-parse', 'HEAD');
      const third = await turn(id, 'Third');
      write(worktree.path, 'untracked.txt', 'written after the last turn\n');
      const checkpoints = (await get(`${id}/checkpoints`)).json() as { run_id: string | null; commit: string }[];
      const afterFirst = checkpoints.find((c) => c.run_id === first.run_id)!.commit;

      assert.equal((await rewind(id, third.run_id, BOB)).status, 404, 'anyone who cannot read it: 404');
      const notARun = await rewind(id, randomUUID());
      assert.equal(notARun.status, 422, notARun.text);
      assert.equal(notARun.json().errors[0].path, 'body.run_id');

      const res = await rewind(id, second.run_id);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json(), { restored: afterFirst }, 'the checkpoint taken after the last run kept');
      // Files as the checkpoint after the first run (kept.txt was written after it, so it is taken back too).
      const path = worktree.path;
      assert.equal(readFileSync(join(path, 'src/app.js'), 'utf8'), readFileSync(join(repo, 'src/app.js'), 'utf8'));
      assert.ok(existsSync(join(path, 'remove-me.txt')), 'a deleted file comes back');
      assert.ok(!existsSync(join(path, 'committed.txt')), "a rewound run's committed file goes");
      assert.ok(!existsSync(join(path, 'untracked.txt')), 'an untracked file the checkpoint lacks goes');
      assert.equal(readFileSync(join(path, 'ignored.log'), 'utf8'), 'kept whatever happens\n', 'ignored files are left alone');
      // The branch back where it was, checked out, with the tip it left kept; the index its tree.
      assert.equal(git(path, 'symbolic-ref', 'HEAD'), `refs/heads/${worktree.branch}`);
      assert.equal(git(path, 'rev-parse', 'HEAD'), tipBefore);
      assert.equal(git(repo, 'rev-parse', `refs/console/rewound/${id}/${second.run_id}`), rewoundTip, 'the tip the branch left is kept');
      assert.ok(!existsSync(join(path, 'kept.txt')), 'what was written after the kept run ended is taken back with the runs after it');
      assert.equal(git(path, 'diff', '--cached', '--name-only'), '', 'nothing staged');

      // The runs: the first kept, the second and third rewound (still readable).
      const runs = await runsOf(id, first.conversation_id);
      assert.deepEqual(runs.map((run) => [run.id, run.rewound]), [[first.run_id, false], [second.run_id, true], [third.run_id, true]]);
      // A retry answers the same and writes nothing more.
      const again = await rewind(id, second.run_id);
      assert.equal(again.status, 200, again.text);
      assert.deepEqual(again.json(), { restored: afterFirst });
      assert.equal((await ledger(id)).filter((m) => m.text.startsWith('The thread was rewound')).length, 1, 'one ledger line says so');

      // The next turn: a fresh session whose brief holds what is left (Start, its reply, the rewind's line), not the rewound turns.
      const fourth = await turn(id, 'Fourth');
      const lines = await ledger(id);
      const reply = lines.filter((m) => m.role === 'assistant').at(-1)!.text;
      assert.match(reply, /Working on: Fourth/);
      const history = /\[demo\] history=(\d+) latest="\[system\] The thread was rewound/.exec(reply);
      assert.ok(history !== null, reply);
      const live = lines.slice(0, lines.findIndex((m) => m.role === 'user' && m.text === 'Fourth'))
        .filter((m) => !/^(Second|Third)$/.test(m.text) && !/Working on: (Second|Third)/.test(m.text));
      assert.equal(Number(history[1]), live.length, `the brief holds the ${live.length} messages not rewound`);
      assert.ok(lines.some((m) => m.role === 'system' && /starts a new one from a brief/.test(m.text)), 'the ledger says the agent starts a new session');
      assert.deepEqual((await runsOf(id, first.conversation_id)).map((run) => run.rewound), [false, true, true, false]);
      assert.ok(fourth.run_id);
      // The thread went on: the same rewind again is no retry.
      const stale = await rewind(id, second.run_id);
      assert.equal(stale.status, 409, stale.text);
      assert.equal(stale.json().code, 'run_rewound');
    });

    it("a fork's worktree starts from the checkpoint after the cutoff message's run, rewound or not, on a branch of its own", async () => {
      const first = await turn(randomUUID(), 'Start', { project: 'repo-web' });
      const id = first.thread_id;
      const { worktree } = (await get(id)).json() as { worktree: { path: string } };
      write(worktree.path, 'second.txt', 'written for the second run\n');
      const second = await turn(id, 'Second');
      write(worktree.path, 'second.txt', 'changed later\n');
      write(worktree.path, 'third.txt', 'third\n');
      await turn(id, 'Third');
      assert.equal((await rewind(id, second.run_id)).status, 200);
      const lines = (await get(`${id}/messages?limit=100`)).json().items as { id: string; role: string; text: string }[];
      const at = (text: string) => lines.find((m) => m.role === 'user' && m.text === text)!.id;
      const replyTo = (text: string) => lines.find((m) => m.role === 'assistant' && m.text.includes(`Working on: ${text}`))!.id;
      const forkAt = async (messageId: string) => {
        const res = await service.ask({ method: 'POST', path: `${P}/${id}/fork`, headers: ALICE, body: JSON.stringify({ message_id: messageId, text: 'Go on from here' }) });
        assert.equal(res.status, 201, res.text);
        const forked = (res.json() as { thread_id: string }).thread_id;
        await idle(forked);
        return ((await get(forked)).json() as { worktree: { path: string; branch: string } }).worktree;
      };
      // At the second run's message (rewound since): the files as that run left them.
      const atSecond = await forkAt(at('Second'));
      assert.equal(readFileSync(join(atSecond.path, 'second.txt'), 'utf8'), 'written for the second run\n');
      assert.ok(!existsSync(join(atSecond.path, 'third.txt')));
      assert.equal(git(atSecond.path, 'status', '--porcelain'), '', 'a clean worktree: the checkpoint is its first commit');
      assert.equal(git(atSecond.path, 'symbolic-ref', 'HEAD'), `refs/heads/${atSecond.branch}`);
      // At the first run's reply: as the first run left them.
      const atStart = await forkAt(replyTo('Start'));
      assert.ok(!existsSync(join(atStart.path, 'second.txt')));
      // The source is untouched by its forks.
      assert.ok(!existsSync(join(worktree.path, 'third.txt')) && !existsSync(join(worktree.path, 'second.txt')), 'the source is as its rewind left it');
    });

    it('a rewind against a directive: one wins, the other is told (409 turn_running) or runs after in the restored files; never a 5xx', async () => {
      for (let round = 0; round < 6; round += 1) {
        const first = await turn(randomUUID(), 'Start', { project: 'repo-web' });
        const id = first.thread_id;
        const { worktree } = (await get(id)).json() as { worktree: { path: string } };
        write(worktree.path, 'rewound.txt', 'taken back\n');
        const second = await turn(id, 'Second');
        const [rewound, sent] = await Promise.all([rewind(id, second.run_id), send(id, { text: `Racing ${round}` })]);
        assert.ok(rewound.status < 500 && sent.status < 500, `${rewound.status} ${sent.status}`);
        assert.equal(sent.status, 202, sent.text);
        await idle(id);
        if (rewound.status === 200) {
          // The rewind went first: the directive's turn ran in the restored files and is not rewound.
          const runs = await runsOf(id, first.conversation_id);
          assert.deepEqual(runs.map((run) => run.rewound), [false, true, false]);
          assert.ok(!existsSync(join(worktree.path, 'rewound.txt')));
        } else {
          assert.equal(rewound.status, 409, rewound.text);
          assert.equal(rewound.json().code, 'turn_running');
          assert.deepEqual((await runsOf(id, first.conversation_id)).map((run) => run.rewound), [false, false, false]);
          assert.ok(existsSync(join(worktree.path, 'rewound.txt')));
        }
      }
    });

    it('a repository thread whose checkpoints are gone is refused 409 checkpoint_unavailable, and nothing is marked', async () => {
      const first = await turn(randomUUID(), 'Start', { project: 'repo-web' });
      const id = first.thread_id;
      const second = await turn(id, 'Second');
      for (const ref of git(repo, 'for-each-ref', '--format=%(refname)', `refs/console/checkpoints/${id}/`).split('\n').filter(Boolean)) git(repo, 'update-ref', '-d', ref);
      const refused = await rewind(id, second.run_id);
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      assert.equal(refused.json().code, 'checkpoint_unavailable');
      assert.deepEqual((await runsOf(id, first.conversation_id)).map((run) => run.rewound), [false, false]);
    });

    it('is refused while a turn runs (409 turn_running); a thread with no worktree is rewound with restored null', async () => {
      const first = await turn(randomUUID(), 'Plain start');
      const id = first.thread_id;
      const slow = await send(id, { text: 'Hold [wait]' });
      assert.equal(slow.status, 202, slow.text);
      const running = await rewind(id, first.run_id);
      assert.equal(running.status, 409, running.text);
      assert.equal(running.json().code, 'turn_running');
      await service.ask({ method: 'POST', path: `${P}/${id}/cancel`, headers: ALICE, body: '{}' });
      await idle(id);
      const done = await rewind(id, first.run_id);
      assert.equal(done.status, 200, done.text);
      assert.deepEqual(done.json(), { restored: null });
      assert.deepEqual((await runsOf(id, first.conversation_id)).map((run) => run.rewound), [true, true]);
    });
  });
}
