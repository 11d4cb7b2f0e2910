// Issue 40, faults at the process level: two service processes on one PostgreSQL database, each with a DATA_DIR of
// its own, and a repository project reached by a file:// URL (a bare repository both reach; moving it away is the
// remote going down). The remote goes away during a turn on A: that turn ends and its checkpoint is owed; B answers
// 503 `repository_unavailable` to a read and to a directive, writing nothing; the remote comes back, A's next use
// pushes what it owed and B reads it. Then a push race: A owes a checkpoint that changed a file, B's turn changed the
// same file differently and reached the remote first; A's next use answers 409 `checkpoint_set_aside` once (its
// checkpoint kept aside, never dropped), and the thread goes on through both from B's.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { readFileSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { ask } from '../support/http.ts';
import { idleThread, startServiceProcess, stopServiceProcess } from '../support/fault-service.ts';
import { git, write } from '../support/git-repo.ts';
import { sharedRemoteWorld } from '../support/shared-remote.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const url = process.env.TEST_DATABASE_URL;


describe('the shared repository unreachable during a turn, then back; a push race between two instances', { skip: url === undefined ? 'TEST_DATABASE_URL is not set' : false }, () => {
  it("an owed checkpoint reaches the other instance once the remote is back; a losing one is set aside with 409, never dropped", { timeout: 240_000 }, async (t: TestContext) => {
    const { remote, env, tempDir } = await sharedRemoteWorld(t, url!, 'console-remote-outage-');
    const down = () => renameSync(remote, `${remote}.away`);
    const back = () => renameSync(`${remote}.away`, remote);
    const diskA = tempDir('a-');
    const diskB = tempDir('b-');
    const a = await startServiceProcess({ ...env, DATA_DIR: diskA });
    t.after(() => stopServiceProcess(a));
    const b = await startServiceProcess({ ...env, DATA_DIR: diskB });
    t.after(() => stopServiceProcess(b));

    const send = (port: number, ref: string, body: Record<string, unknown>) =>
      ask(port, { method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    const changes = (port: number, threadId: string) => ask(port, { path: `${P}/${threadId}/changes`, headers: ALICE });
    const changed = async (port: number, threadId: string) => {
      const res = await changes(port, threadId);
      assert.equal(res.status, 200, res.text);
      return (res.json() as { files: { path: string }[] }).files.map((f) => f.path).sort();
    };
    const turnOn = async (port: number, threadId: string, text: string) => {
      const sent = await send(port, threadId, { text });
      assert.equal(sent.status, 202, sent.text);
      await idleThread(port, threadId, ALICE);
    };
    /** A turn on A during which the remote goes down: it ends (cancelled) with the files written meanwhile, its checkpoint owed. */
    const turnOnAWhileDown = async (threadId: string, file: string, text: string) => {
      const held = await send(a.port, threadId, { text: 'Hold on [wait]' });
      assert.equal(held.status, 202, held.text);
      down();
      write(join(diskA, 'worktrees', threadId), file, text);
      assert.equal((await ask(a.port, { method: 'POST', path: `${P}/${threadId}/cancel`, headers: ALICE, body: '{}' })).status, 202);
      await idleThread(a.port, threadId, ALICE);
    };
    const runsOf = async (threadId: string, conversationId: string) =>
      (await ask(a.port, { path: `${P}/${threadId}/conversations/${conversationId}/runs?limit=50`, headers: ALICE })).json().items as { id: string }[];

    const started = await send(a.port, randomUUID(), { text: 'Start', model: 'claude:opus', project: 'repo-web' });
    assert.equal(started.status, 202, started.text);
    const { thread_id: id, conversation_id: conversationId } = started.json() as { thread_id: string; conversation_id: string };
    await idleThread(a.port, id, ALICE);
    write(join(diskA, 'worktrees', id), 'from-a.txt', 'written on A\n');
    await turnOn(a.port, id, 'Second on A');
    assert.deepEqual(await changed(b.port, id), ['from-a.txt']);

    // 1. The remote goes away during A's turn: the turn ends, and nothing is run or read through B on a stale copy.
    await turnOnAWhileDown(id, 'while-down.txt', 'written while the remote was away\n');
    const runsBefore = (await runsOf(id, conversationId)).length;
    for (const refused of [await changes(b.port, id), await send(b.port, id, { text: 'Through B while it is down' })]) {
      assert.equal(refused.status, 503, refused.text);
      assert.equal(refused.headers['content-type'], 'application/problem+json');
      assert.equal(refused.json().code, 'repository_unavailable');
    }
    assert.equal((await runsOf(id, conversationId)).length, runsBefore, 'the refused directive wrote no run');
    // Back: A's next use pushes the checkpoint it owed, and B reads it.
    back();
    assert.deepEqual(await changed(a.port, id), ['from-a.txt', 'while-down.txt']);
    assert.deepEqual(await changed(b.port, id), ['from-a.txt', 'while-down.txt'], "B reads what A took while the remote was away");

    // 2. A push race: A owes a checkpoint changing shared.txt; B's turn changes it differently and pushes first.
    await turnOnAWhileDown(id, 'shared.txt', "A's version\n");
    back();
    await changed(b.port, id);
    write(join(diskB, 'worktrees', id), 'shared.txt', "B's version\n");
    await turnOn(b.port, id, 'On B');
    const aside = await changes(a.port, id);
    assert.equal(aside.status, 409, aside.text);
    assert.equal(aside.headers['content-type'], 'application/problem+json');
    assert.equal(aside.json().code, 'checkpoint_set_aside');
    // Told once; then the thread goes on from B's on A too, and A's checkpoint is kept aside in A's clone.
    assert.deepEqual(await changed(a.port, id), ['from-a.txt', 'shared.txt', 'while-down.txt']);
    assert.equal(readFileSync(join(diskA, 'worktrees', id, 'shared.txt'), 'utf8'), "B's version\n");
    const clone = git(join(diskA, 'worktrees', id), 'rev-parse', '--path-format=absolute', '--git-common-dir');
    const kept = git(clone, 'for-each-ref', '--format=%(refname)', `refs/console/rejected/${id}/`);
    assert.equal(kept.split('\n').filter(Boolean).length, 1, 'the checkpoint set aside is kept');
    assert.equal(git(clone, 'show', `${kept.trim()}:shared.txt`), "A's version");
    await turnOn(a.port, id, 'Goes on through A');
    assert.deepEqual(await changed(b.port, id), ['from-a.txt', 'shared.txt', 'while-down.txt']);
  });
});
