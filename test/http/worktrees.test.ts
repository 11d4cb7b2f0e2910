// Issue 27: every thread on a project ran in one directory; a project may now be a git repository, and each
// thread's runs work in a worktree of its own (branch console/<thread id>), whose changes are read, diffed,
// reviewed and merged over HTTP. Real repositories made in a temporary directory, the bundled demo agent, on
// memory, embedded PGlite and (with TEST_DATABASE_URL) PostgreSQL.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, lstatSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { plantGitDirectory, ran } from '../support/hostile-worktree.ts';
import { idleThread } from '../support/http.ts';
import { startService, type TestService } from '../support/service.ts';
import { storageKinds, type OpenedStorage } from '../support/storage-kinds.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const BOB: Record<string, string> = { authorization: 'Bearer token-bob', 'content-type': 'application/json' };
const P = '/api/console/threads';

for (const kind of storageKinds('worktrees')) {
  describe(`a worktree per thread: ${kind.name}`, () => {
    let opened: OpenedStorage;
    let service: TestService;
    let repo: string;
    let remote: string;
    before(async () => {
      repo = gitRepository();
      // A shared remote reached by URL (contract section 8, "More than one machine"): this instance works in a clone of it.
      remote = mkdtempSync(join(tmpdir(), 'console-remote-'));
      git(remote, 'clone', '--bare', '--quiet', repo, join(remote, 'shared.git'));
      opened = await kind.open();
      const fixture = fixtureWorld();
      await opened.storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }, { name: 'remote-web', directory: null, repo: `file://${join(remote, 'shared.git')}`, base: 'main' }] });
      service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage: opened.storage });
    });
    after(async () => {
      await service.close();
      await opened.close();
      rmSync(repo, { recursive: true, force: true });
      rmSync(remote, { recursive: true, force: true });
    });

    const send = (ref: string, body: Record<string, unknown>, headers = ALICE) =>
      service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers, body: JSON.stringify(body) });
    const get = (path: string, headers = ALICE) => service.ask({ path: `${P}/${path}`, headers });
    const post = (path: string, body: unknown, headers = ALICE) => service.ask({ method: 'POST', path: `${P}/${path}`, headers, body: JSON.stringify(body) });
    const idle = (threadId: string) => idleThread(service.port, threadId, ALICE);
    /** A new thread of alice's on the repository project, its first turn over. */
    const thread = async (text = 'Start', project = 'repo-web') => {
      const res = await send(randomUUID(), { text, project, model: 'claude:opus' });
      assert.equal(res.status, 202, res.text);
      const { thread_id: id, run_id: run, conversation_id: conversation } = res.json() as { thread_id: string; run_id: string; conversation_id: string };
      await idle(id);
      const row = (await get(id)).json() as { worktree: { branch: string; base: string; path: string } | null };
      assert.ok(row.worktree !== null, 'the first turn made the worktree');
      return { id, run, conversation, worktree: row.worktree };
    };
    const prompt = async (threadId: string, runId: string) =>
      ((await get(`${threadId}/runs/${runId}/messages`)).json().items as { role: string; content: string }[]).find((m) => m.role === 'user')?.content;

    it("gives each thread its own worktree, where its runs work, and shows each only its own changes", async () => {
      const a = await thread();
      const b = await thread();
      assert.deepEqual(a.worktree, { branch: `console/${a.id}`, base: 'main', path: join(service.config.dataDir, 'worktrees', a.id) });
      assert.notEqual(a.worktree.path, b.worktree.path);
      const runs = (await get(`${a.id}/conversations/${a.conversation}/runs?limit=10`)).json().items as { directory: string }[];
      assert.deepEqual(runs.map((run) => run.directory), [a.worktree.path], "the run's directory is the worktree");
      assert.equal(git(a.worktree.path, 'symbolic-ref', 'HEAD'), `refs/heads/console/${a.id}`);
      // A second turn works in the same worktree.
      const again = await send(a.id, { text: 'Again' });
      assert.equal(again.status, 202, again.text);
      await idle(a.id);
      const both = (await get(`${a.id}/conversations/${a.conversation}/runs?limit=10`)).json().items as { directory: string }[];
      assert.deepEqual(both.map((run) => run.directory), [a.worktree.path, a.worktree.path]);

      write(a.worktree.path, 'a.txt', 'from thread a\n');
      write(b.worktree.path, 'b.txt', 'from thread b\n');
      const changesA = await get(`${a.id}/changes`);
      assert.equal(changesA.status, 200, changesA.text);
      assert.deepEqual(changesA.json(), {
        base: 'main', branch: `console/${a.id}`, ahead: 0, behind: 0, uncommitted: 1,
        files: [{ path: 'a.txt', status: 'added', additions: 1, deletions: 0, binary: false }],
      });
      assert.deepEqual((await get(`${b.id}/changes`)).json().files.map((f: { path: string }) => f.path), ['b.txt']);

      const diff = await get(`${a.id}/changes/diff?path=a.txt`);
      assert.equal(diff.status, 200);
      assert.match(diff.headers['content-type'] ?? '', /^text\/x-diff/);
      assert.match(diff.text, /^diff --git a\/a\.txt b\/a\.txt[\s\S]*\+from thread a\n$/);
      assert.equal((await get(`${a.id}/changes/diff?path=b.txt`)).status, 404, "another thread's file is not among this one's");
      for (const path of ['../b.txt', `../${b.id}/b.txt`, '/etc/passwd', 'a.txt/../../../etc/passwd', '.git/config']) {
        const refused = await get(`${a.id}/changes/diff?path=${encodeURIComponent(path)}`);
        assert.equal(refused.status, 404, path);
        assert.equal(refused.json().code, 'change_unavailable');
      }
      assert.match((await get(`${a.id}/changes/diff`)).text, /a\.txt/);
      // A worktree removed by hand is made again from its branch before it is read (what was not committed is gone).
      rmSync(b.worktree.path, { recursive: true, force: true });
      const remade = await get(`${b.id}/changes`);
      assert.equal(remade.status, 200, remade.text);
      assert.deepEqual(remade.json().files, []);
      write(b.worktree.path, 'b.txt', 'from thread b\n');

      // Someone else's thread is 404, on every route of it.
      for (const path of [`${a.id}/changes`, `${a.id}/changes/diff?path=a.txt`]) assert.equal((await get(path, BOB)).status, 404, path);
      assert.equal((await post(`${a.id}/changes/merge`, { strategy: 'squash' }, BOB)).status, 404);
      assert.equal((await post(`${a.id}/changes/review`, { comments: [{ path: 'a.txt', line: 1, text: 'x' }] }, BOB)).status, 404);
      // A thread on a plain project has no worktree.
      const plain = await send(randomUUID(), { text: 'Plain', project: 'acme-web', model: 'claude:opus' });
      const plainId = plain.json().thread_id as string;
      await idle(plainId);
      assert.equal((await get(plainId)).json().worktree, null);
      assert.equal((await get(`${plainId}/changes`)).json().code, 'no_worktree');

      // Squash and merge both land in main, and the repository's checkout of main follows.
      const squashed = await post(`${a.id}/changes/merge`, { strategy: 'squash', message: 'Add a.txt' });
      assert.equal(squashed.status, 200, squashed.text);
      assert.deepEqual(squashed.json(), { commit: git(repo, 'rev-parse', 'main'), base: 'main' });
      assert.equal(git(repo, 'log', '-1', '--format=%s', 'main'), 'Add a.txt');
      assert.equal(readFileSync(join(repo, 'a.txt'), 'utf8'), 'from thread a\n');
      const merged = await post(`${b.id}/changes/merge`, { strategy: 'merge' });
      assert.equal(merged.status, 200, merged.text);
      assert.equal(git(repo, 'log', '-1', '--format=%P', 'main').split(' ').length, 2, 'a merge commit');
      assert.equal(readFileSync(join(repo, 'b.txt'), 'utf8'), 'from thread b\n');
      assert.equal(git(repo, 'status', '--porcelain'), '');
    });

    // Issue 40: a merge whose push of the base could not reach the remote answered 409 base_moved ("ask again").
    it('a merge whose push of the base cannot reach the remote answers 503 repository_unavailable, and lands once it can', async () => {
      const t = await thread('Start', 'remote-web');
      write(t.worktree.path, 'pushed.txt', 'merged through a remote\n');
      // Fetches still reach it; pushes from this instance's clone do not (a remote that went away between the two).
      const clone = git(t.worktree.path, 'rev-parse', '--path-format=absolute', '--git-common-dir');
      git(clone, 'config', 'remote.origin.pushurl', `file://${join(remote, 'gone.git')}`);
      const before = git(join(remote, 'shared.git'), 'rev-parse', 'main');
      const refused = await post(`${t.id}/changes/merge`, { strategy: 'squash' });
      assert.equal(refused.status, 503, refused.text);
      assert.match(refused.headers['content-type'] ?? '', /^application\/problem\+json/);
      assert.equal(refused.json().code, 'repository_unavailable');
      assert.equal(git(join(remote, 'shared.git'), 'rev-parse', 'main'), before);
      git(clone, 'config', '--unset', 'remote.origin.pushurl');
      const landed = await post(`${t.id}/changes/merge`, { strategy: 'squash' });
      assert.equal(landed.status, 200, landed.text);
      assert.equal(git(join(remote, 'shared.git'), 'show', 'main:pushed.txt'), 'merged through a remote');
    });

    it("a teleport's landing thread works in a worktree of its own, from the branch of the thread it came from", async () => {
      const t = await thread();
      write(t.worktree.path, 'carried.txt', 'work so far\n');
      git(t.worktree.path, 'add', 'carried.txt');
      git(t.worktree.path, 'commit', '--quiet', '-m', 'work so far');
      // To a chat room, then back to a new console thread with a prompt: a fork of a fork of the thread.
      const away = await post(`${t.id}/teleport`, { destination: { channel: 'team-chat', id: 'general' } });
      assert.equal(away.status, 202, away.text);
      const moved = await post(`${away.json().thread_id}/teleport`, { destination: { channel: 'console', id: 'new' }, prompt: 'Go on here' });
      assert.equal(moved.status, 202, moved.text);
      const landing = moved.json().thread_id as string;
      await idle(landing);
      const row = (await get(landing)).json() as { worktree: { branch: string; base: string; path: string } | null };
      assert.deepEqual(row.worktree, { branch: `console/${landing}`, base: 'main', path: join(service.config.dataDir, 'worktrees', landing) });
      assert.equal(readFileSync(join(row.worktree!.path, 'carried.txt'), 'utf8'), 'work so far\n');
      const conversation = ((await get(`${landing}/conversations`)).json() as { id: string }[]).at(-1)!.id;
      const runs = (await get(`${landing}/conversations/${conversation}/runs?limit=10`)).json().items as { directory: string }[];
      assert.deepEqual(runs.map((run) => run.directory), [row.worktree!.path]);
      assert.deepEqual((await get(`${landing}/changes`)).json().files.map((f: { path: string }) => f.path), ['carried.txt']);
    });

    it('diffs added, modified, deleted, renamed, binary and untracked files, and refuses one over 2 MiB', async () => {
      const t = await thread();
      const at = t.worktree.path;
      write(at, 'src/app.js', readFileSync(join(at, 'src/app.js'), 'utf8').replace('line 3\n', 'line three\n'));
      git(at, 'commit', '--quiet', '-am', 'edit app');
      git(at, 'mv', 'old-name.txt', 'new-name.txt');
      rmSync(join(at, 'remove-me.txt'));
      write(at, 'notes/untracked.md', '# Notes\n');
      write(at, 'logo.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 1, 2]));
      const files = (await get(`${t.id}/changes`)).json().files as { path: string; status: string; old_path?: string; binary: boolean }[];
      assert.deepEqual(files.map((f) => [f.path, f.status, f.old_path ?? null, f.binary]).sort(), [
        ['logo.png', 'added', null, true],
        ['new-name.txt', 'renamed', 'old-name.txt', false],
        ['notes/untracked.md', 'added', null, false],
        ['remove-me.txt', 'deleted', null, false],
        ['src/app.js', 'modified', null, false],
      ]);
      const diff = async (path: string) => (await get(`${t.id}/changes/diff?path=${encodeURIComponent(path)}`)).text;
      assert.match(await diff('src/app.js'), /-line 3\n\+line three\n/);
      assert.match(await diff('new-name.txt'), /rename from old-name\.txt\nrename to new-name\.txt/);
      assert.match(await diff('remove-me.txt'), /deleted file mode/);
      assert.match(await diff('notes/untracked.md'), /new file mode[\s\S]*\+# Notes/);
      assert.match(await diff('logo.png'), /Binary files \/dev\/null and b\/logo\.png differ/);
      write(at, 'big.txt', 'x'.repeat(80) .concat('\n').repeat(30_000));
      const big = await get(`${t.id}/changes/diff?path=big.txt`);
      assert.equal(big.status, 413, big.text);
      assert.equal(big.json().code, 'diff_too_large');
      assert.equal((await get(`${t.id}/changes/diff`)).status, 413);
    });

    it('refuses a conflicting merge (409 with its files) and leaves main as it was; refuses while a turn runs', async () => {
      const t = await thread();
      write(t.worktree.path, 'README.md', '# From the thread\n');
      write(repo, 'README.md', '# From main\n');
      git(repo, 'commit', '--quiet', '-am', 'main edits the readme');
      const before = git(repo, 'rev-parse', 'main');
      const refused = await post(`${t.id}/changes/merge`, { strategy: 'squash' });
      assert.equal(refused.status, 409, refused.text);
      assert.equal(refused.json().code, 'merge_conflict');
      assert.deepEqual(refused.json().files, ['README.md']);
      assert.equal(git(repo, 'rev-parse', 'main'), before);
      assert.equal(git(repo, 'status', '--porcelain'), '');
      assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# From main\n');
      assert.equal((await post(`${t.id}/changes/merge`, { strategy: 'rebase' })).status, 422);

      const held = await send(t.id, { text: 'hold [wait]' });
      assert.equal(held.status, 202, held.text);
      const busy = await post(`${t.id}/changes/merge`, { strategy: 'squash' });
      assert.equal(busy.status, 409);
      assert.equal(busy.json().code, 'turn_running');
      await service.ask({ method: 'POST', path: `${P}/${t.id}/cancel`, headers: ALICE });
      await idle(t.id);
    });

    it('sends review comments as the next directive, each quoted with its file, line and the lines around it', async () => {
      const t = await thread();
      write(t.worktree.path, 'src/app.js', readFileSync(join(t.worktree.path, 'src/app.js'), 'utf8').replace('line 6\n', 'line six\n'));
      const refused = await post(`${t.id}/changes/review`, { comments: [{ path: '../../etc/passwd', line: 1, text: 'x' }] });
      assert.equal(refused.status, 422, refused.text);
      assert.deepEqual(refused.json().errors, [{ path: 'body.comments.0.path', message: 'is not a changed file of this thread' }]);
      const res = await post(`${t.id}/changes/review`, { text: 'Two things.', comments: [{ path: 'src/app.js', line: 6, text: 'Use a digit here' }] });
      assert.equal(res.status, 202, res.text);
      const { run_id: run } = res.json() as { run_id: string };
      await idle(t.id);
      const text = await prompt(t.id, run);
      assert.ok(text !== undefined);
      assert.match(text, /^Two things\./);
      assert.match(text, /src\/app\.js, line 6:/);
      for (const line of ['line 3', 'line 4', 'line 5', 'line six', 'line 7', 'line 8', 'line 9']) assert.ok(text.includes(line), line);
      assert.ok(!text.includes('line 2\n') && !text.includes('line 10'), 'three lines each side');
      assert.match(text, /> {1,2}6 \| line six/);
      assert.match(text, /> Use a digit here/);
      // On a busy thread a review queues as a directive does.
      const held = await send(t.id, { text: 'hold [wait]' });
      assert.equal(held.status, 202);
      const queued = await post(`${t.id}/changes/review`, { comments: [{ path: 'src/app.js', line: 1, text: 'Later' }], when_busy: 'queue' });
      assert.equal(queued.status, 202, queued.text);
      assert.equal(queued.json().queued.position, 1);
      assert.equal((await post(`${t.id}/changes/review`, { comments: [{ path: 'src/app.js', line: 1, text: 'Now' }] })).json().code, 'turn_running');
      await service.ask({ method: 'POST', path: `${P}/${t.id}/cancel`, headers: ALICE });
      await idle(t.id);
      assert.ok(existsSync(t.worktree.path));
    });

    // The security probe's high finding, end to end: by plain file writes in its worktree (a `.git` directory of its
    // own whose configuration names a clean filter, fsmonitor, …, and a `.gitattributes` naming them) an agent made
    // the next read of the thread's changes, by its owner or any member, run its command as the service's user.
    // And a `.git` made a symbolic link answered 500 on every changes route.
    it("never runs a command a .git written in the worktree names, on any changes route: 200 or 409, never 500", async (context) => {
      const t = await thread();
      const markers = mkdtempSync(join(tmpdir(), 'console-markers-'));
      context.after(() => rmSync(markers, { recursive: true, force: true }));
      const file = `feature-${t.id}.txt`;
      write(t.worktree.path, file, 'a feature\n');
      plantGitDirectory(t.worktree.path, markers);
      const answered = async (what: string, res: { status: number; text: string }, expected: number) => {
        assert.deepEqual(ran(markers), [], `${what}: no planted command ran (answered ${res.status})`);
        assert.notEqual(res.status, 500, `${what}: ${res.text}`);
        assert.equal(res.status, expected, `${what}: ${res.text}`);
      };
      const changes = await get(`${t.id}/changes`);
      await answered('changes', changes, 200);
      assert.deepEqual(changes.json().files.map((f: { path: string }) => f.path).sort(), ['.gitattributes', file]);
      await answered('a file\'s diff', await get(`${t.id}/changes/diff?path=${file}`), 200);
      await answered('the whole diff', await get(`${t.id}/changes/diff`), 200);
      await answered('a review', await post(`${t.id}/changes/review`, { comments: [{ path: file, line: 1, text: 'Fine' }] }), 202);
      await idle(t.id);
      plantGitDirectory(t.worktree.path, markers);
      await answered('a merge', await post(`${t.id}/changes/merge`, { strategy: 'merge', message: `Merge ${file}` }), 200);
      assert.equal(git(repo, 'show', `main:${file}`), 'a feature');
      assert.equal(git(repo, 'status', '--porcelain'), '');
      // A symbolic link out of the worktree as its `.git`: put back, and read.
      rmSync(join(t.worktree.path, '.git'), { recursive: true, force: true });
      symlinkSync('/etc/passwd', join(t.worktree.path, '.git'));
      write(t.worktree.path, 'later.txt', 'later\n');
      for (const path of [`${t.id}/changes`, `${t.id}/changes/diff?path=later.txt`]) await answered(path, await get(path), 200);
      assert.equal(lstatSync(join(t.worktree.path, '.git')).isFile(), true);
    });
  });
}
