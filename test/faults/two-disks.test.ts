// Issue 40: two instances on one PostgreSQL database, each with a DATA_DIR of its own, the second in a mount
// namespace where the first's DATA_DIR is an empty tmpfs (it cannot see the first's disk, as on another machine), and
// a repository project reached by a file:// URL (a bare repository both reach). A turn through the first; the
// changes and a turn through the second; kill -9 of the first with its disk deleted; a merge through the survivor
// lands every file on the shared `main` (a turn A was running when it died lost, only that), and a new instance with an empty disk reads the same. Before the fix: the
// changes read through the second answered 500, and its turn "succeeded" in a directory it cannot see.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { ask } from '../support/http.ts';
import { idleThread, startServiceProcess, stopServiceProcess } from '../support/fault-service.ts';
import { git, write } from '../support/git-repo.ts';
import { sharedRemoteWorld } from '../support/shared-remote.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const url = process.env.TEST_DATABASE_URL;
const canUnshare = process.getuid?.() === 0 && spawnSync('unshare', ['-m', 'true']).status === 0;
const skip = url === undefined ? 'TEST_DATABASE_URL is not set' : !canUnshare ? 'needs root and unshare -m (a mount namespace)' : false;




describe('two instances, two disks, a repository reached by URL', { skip }, () => {
  it('a turn through A, changes and a turn through B, A killed with its disk gone, a merge through B lands everything', { timeout: 240_000 }, async (t: TestContext) => {
    const { remote, env, tempDir } = await sharedRemoteWorld(t, url!, 'console-two-disks-');
    const diskA = tempDir('a-');
    const diskB = tempDir('b-');
    const a = await startServiceProcess({ ...env, DATA_DIR: diskA });
    t.after(() => stopServiceProcess(a));
    // B cannot see A's disk: an empty tmpfs over it, in a mount namespace of its own.
    const b = await startServiceProcess({ ...env, DATA_DIR: diskB }, ['unshare', '-m', 'sh', '-c', `mount -t tmpfs tmpfs '${diskA}' && exec "$0" "$@"`]);
    t.after(() => stopServiceProcess(b));

    const send = (port: number, ref: string, body: Record<string, unknown>) =>
      ask(port, { method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    const changed = async (port: number, threadId: string) => {
      const res = await ask(port, { path: `${P}/${threadId}/changes`, headers: ALICE });
      assert.equal(res.status, 200, res.text);
      return (res.json() as { files: { path: string }[] }).files.map((f) => f.path).sort();
    };
    const started = await send(a.port, randomUUID(), { text: 'Start', model: 'claude:opus', project: 'repo-web' });
    assert.equal(started.status, 202, started.text);
    const { thread_id: id, conversation_id: conversationId } = started.json() as { thread_id: string; conversation_id: string };
    await idleThread(a.port, id, ALICE);
    write(join(diskA, 'worktrees', id), 'from-a.txt', 'written on A\n');
    assert.equal((await send(a.port, id, { text: 'Second on A' })).status, 202);
    await idleThread(a.port, id, ALICE);

    assert.deepEqual(await changed(b.port, id), ['from-a.txt'], "B reads A's work from the shared repository");
    const third = await send(b.port, id, { text: 'Third on B' });
    assert.equal(third.status, 202, third.text);
    await idleThread(b.port, id, ALICE);
    const runs = (await ask(b.port, { path: `${P}/${id}/conversations/${conversationId}/runs?limit=10`, headers: ALICE })).json().items as { id: string; directory: string; status: string }[];
    const run = runs.find((r) => r.id === (third.json() as { run_id: string }).run_id)!;
    assert.deepEqual([run.directory, run.status], [join(diskB, 'worktrees', id), 'succeeded'], "B's turn ran on B's disk");
    write(join(diskB, 'worktrees', id), 'from-b.txt', 'written on B\n');
    assert.equal((await send(b.port, id, { text: 'Fourth on B' })).status, 202);
    await idleThread(b.port, id, ALICE);

    // A dies mid-turn, and its disk with it: that turn's files (never pushed) are its only loss.
    const held = await send(a.port, id, { text: 'A turn that never ends [wait]' });
    assert.equal(held.status, 202, held.text);
    const heldRun = (held.json() as { run_id: string }).run_id;
    for (let i = 0; i < 200 && !existsSync(join(diskA, 'worktrees', id, 'from-b.txt')); i += 1) await new Promise((resolve) => setTimeout(resolve, 50));
    write(join(diskA, 'worktrees', id), 'lost.txt', 'written during the turn A never finished\n');
    a.child.kill('SIGKILL');
    await once(a.child, 'exit');
    rmSync(diskA, { recursive: true, force: true });
    // B sweeps the lease A stopped renewing: the run ends, and the thread goes on through B from its last checkpoint.
    await idleThread(b.port, id, ALICE);
    const swept = (await ask(b.port, { path: `${P}/${id}/conversations/${conversationId}/runs?limit=10`, headers: ALICE })).json().items as { id: string; status: string }[];
    assert.equal(swept.find((r) => r.id === heldRun)?.status, 'failed', 'the turn A held ends lease-expired');
    assert.equal((await send(b.port, id, { text: 'After A died' })).status, 202);
    await idleThread(b.port, id, ALICE);
    assert.deepEqual(await changed(b.port, id), ['from-a.txt', 'from-b.txt'], 'nothing of the lost turn, nothing else lost');
    const merged = await ask(b.port, { method: 'POST', path: `${P}/${id}/changes/merge`, headers: ALICE, body: JSON.stringify({ strategy: 'squash' }) });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(git(remote, 'show', 'main:from-a.txt'), 'written on A');
    assert.equal(git(remote, 'show', 'main:from-b.txt'), 'written on B');

    // A new instance on an empty disk answers as B does.
    const c = await startServiceProcess({ ...env, DATA_DIR: tempDir('c-') });
    t.after(() => stopServiceProcess(c));
    assert.deepEqual(await changed(c.port, id), await changed(b.port, id));
    assert.ok(!existsSync(diskA));
  });
});
