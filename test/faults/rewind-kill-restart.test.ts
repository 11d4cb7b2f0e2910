// Issue 39, rewind: the runs' marks and the journal of the files to put back are one write; the files follow.
// kill -9 of a real service process between the two (a `git` on its PATH that stops at the restore's checkout:
// test/support/paused-git.ts), then a restart on the same storage and data directory: the runs read rewound, and
// the thread's next read finds the files put back (the journal finished first) and its next turn runs there.
// What would break it: the files restored before the marks are written, or a journal nothing finishes (the changes
// read would then list the rewound run's file, and the next turn would start from it).
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { ask } from '../support/http.ts';
import { forEachFaultStorage, idleThread, startServiceProcess, stopServiceProcess, type FaultStorage } from '../support/fault-service.ts';
import { gitRepository, write } from '../support/git-repo.ts';
import { pausedGit, until } from '../support/paused-git.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const repo = gitRepository('console-fault-rewind-');
after(() => rmSync(repo, { recursive: true, force: true }));




function killDuringRewind(name: string, storage: FaultStorage) {
  it(`${name}: kill -9 between a rewind's marks and its files, then a restart: the next read puts the files back`, { timeout: 180_000 }, async (t: TestContext) => {
    const { env, cleanup } = await storage();
    t.after(cleanup);
    // Only the restore's checkout names this option.
    const paused = pausedGit('--exclude-per-directory=.gitignore');
    t.after(() => rmSync(paused.dir, { recursive: true, force: true }));
    const first = await startServiceProcess({ ...env, PATH: paused.path(process.env.PATH ?? '') });
    t.after(() => stopServiceProcess(first));
    const send = (port: number, ref: string, body: Record<string, unknown>) =>
      ask(port, { method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    const started = await send(first.port, randomUUID(), { text: 'Start', model: 'claude:opus', project: 'repo-web' });
    assert.equal(started.status, 202, started.text);
    const { thread_id: threadId, conversation_id: conversationId } = started.json() as { thread_id: string; conversation_id: string };
    await idleThread(first.port, threadId, ALICE);
    const row = (await ask(first.port, { path: `${P}/${threadId}`, headers: ALICE })).json() as { worktree: { path: string } };
    const second = await send(first.port, threadId, { text: 'Second' });
    assert.equal(second.status, 202, second.text);
    const { run_id: secondRun } = second.json() as { run_id: string };
    await idleThread(first.port, threadId, ALICE);
    // What the rewound run leaves: a file its checkpoint holds.
    write(row.worktree.path, 'rewound.txt', 'taken back\n');
    const third = await send(first.port, threadId, { text: 'Third' });
    assert.equal(third.status, 202, third.text);
    await idleThread(first.port, threadId, ALICE);

    const pending = ask(first.port, { method: 'POST', path: `${P}/${threadId}/rewind`, headers: ALICE, body: JSON.stringify({ run_id: secondRun }) }).catch((error: unknown) => error);
    await until(paused.reached, 60_000, "the rewind's checkout");
    first.child.kill('SIGKILL');
    await once(first.child, 'exit');
    await pending;
    assert.ok(existsSync(join(row.worktree.path, 'rewound.txt')), 'the kill landed before the files went back');

    const second2 = await startServiceProcess(env);
    t.after(() => stopServiceProcess(second2));
    const runs = (await ask(second2.port, { path: `${P}/${threadId}/conversations/${conversationId}/runs?limit=10`, headers: ALICE })).json().items as { id: string; rewound: boolean }[];
    assert.deepEqual(runs.map((run) => run.rewound), [true, true, false], 'the marks were written');
    const changes = await ask(second2.port, { path: `${P}/${threadId}/changes`, headers: ALICE });
    assert.equal(changes.status, 200, changes.text);
    assert.deepEqual((changes.json() as { files: { path: string }[] }).files.map((f) => f.path), [], 'the read finished the restore first');
    assert.ok(!existsSync(join(row.worktree.path, 'rewound.txt')));
    // A retry of the rewind answers as the first would have.
    const retry = await ask(second2.port, { method: 'POST', path: `${P}/${threadId}/rewind`, headers: ALICE, body: JSON.stringify({ run_id: secondRun }) });
    assert.equal(retry.status, 200, retry.text);
    const next = await send(second2.port, threadId, { text: 'After the restart' });
    assert.equal(next.status, 202, next.text);
    await idleThread(second2.port, threadId, ALICE);
    assert.ok(!existsSync(join(row.worktree.path, 'rewound.txt')));
  });
}

describe('kill -9 during a rewind, then a restart', () => {
  forEachFaultStorage(killDuringRewind, { projects: [{ name: 'repo-web', repo, base: 'main' }] });
});
