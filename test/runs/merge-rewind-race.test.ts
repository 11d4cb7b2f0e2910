// Issue 39, a merge against a rewind: the merge passed its checks (no turn, nothing queued) before the rewind wrote
// its run marks, then took the thread's git lock before the rewind's restore did. Both answered 200, and the base
// got the work the rewind took back. Played in that order, deterministically, with the use cases over the memory
// storage and the real git worktrees, a gate in front of each of the two calls into the worktrees port.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { gitWorktrees } from '../../adapters/git/worktrees.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { rewindRestores, threadRewinds } from '../../core/rewinds/rewinds.ts';
import { threadChanges } from '../../core/worktrees/changes.ts';
import type { User } from '../../domain/model.ts';
import { ok } from '../../domain/result.ts';
import type { RunDirectory } from '../../ports/run-directory.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';

const ALICE = { id: 'alice', name: 'Alice' } as unknown as User;

/** A gate: `reached` resolves once a caller is held at it, `open()` lets it go on. */
function gate() {
  let arrive!: () => void;
  let release!: () => void;
  const reached = new Promise<void>((resolve) => { arrive = resolve; });
  const opened = new Promise<void>((resolve) => { release = resolve; });
  return { reached, open: () => release(), pass: async () => { arrive(); await opened; } };
}

describe('a merge against a rewind (core, real git)', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('a merge that passed its checks before a rewind wrote its marks, and took the lock before its restore, is refused 409 rewind_pending; the rewind wins and the base gets nothing it took back', async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const storage = createMemoryStorage();
    await storage.importWorld(fixtureWorld());
    const real = gitWorktrees({ root });

    // Alice's repository thread: a first run that wrote kept.txt, a second that wrote rewound.txt, a checkpoint after each.
    const { thread, conversation } = await storage.writer.createConsoleThread({
      owner: 'alice', key: uuidv7(), project: 'acme-web', title: 'Race a merge and a rewind',
      conversation: { agent: 'claude', model: 'opus', permission_mode: 'default', effort: null },
    });
    const made1 = await real.ensure({ repo, base: 'main', threadId: thread.id });
    assert.ok(made1.ok, JSON.stringify(made1));
    const worktree = made1.value;
    await storage.writer.setWorktree(thread.id, worktree);
    assert.ok((await real.checkpoint({ threadId: thread.id, path: worktree.path, runId: null, messageId: null })).ok);
    const turn = async (text: string, file: string) => {
      const started = await storage.writer.writeDirective({
        thread_id: thread.id, conversation_id: conversation.id, message_id: uuidv7(), author: 'alice', text,
        directory: worktree.path, permission_mode: null, lease: { holder: 'core-test', ms: 60_000 },
      });
      assert.ok(started.kind === 'started', started.kind);
      write(worktree.path, file, `${text}\n`);
      assert.ok((await real.checkpoint({ threadId: thread.id, path: worktree.path, runId: started.run.id, messageId: started.message.id })).ok);
      await storage.writer.finishRun(started.run.id, 'succeeded', null);
      await storage.writer.releaseTurn(started.run.id);
      return started.run.id;
    };
    await turn('First', 'kept.txt');
    const second = await turn('Second', 'rewound.txt');

    // The gates: the merge held after its checks, before the worktrees port (and its lock); the rewind's restore
    // held after its marks and journal are written, before the port.
    const mergeGate = gate();
    const restoreGate = gate();
    const worktrees: Worktrees = {
      ...real,
      merge: async (w, input) => (await mergeGate.pass(), real.merge(w, input)),
      restore: async (w, input) => (await restoreGate.pass(), real.restore(w, input)),
    };
    // The run directory as the service's: a journaled restore is finished before anything reads or runs.
    const settle = rewindRestores({ writer: storage.writer, worktrees });
    const runDirectory: RunDirectory = async (row) => {
      const settled = await settle({ id: row.id, worktree: row.worktree });
      return settled.ok ? ok(row.worktree?.path ?? '/nowhere') : settled;
    };
    const changes = threadChanges({ storage, worktrees, runDirectory, submit: async () => assert.fail('no directive is sent') });
    const rewind = threadRewinds({
      storage, worktrees, runDirectory, newId: uuidv7,
      emit: async (threadId, type, data) => ({ seq: 1, type, thread_id: threadId, at: new Date(0).toISOString(), data }),
    });

    const mainBefore = git(repo, 'rev-parse', 'main');
    const merging = changes.merge(ALICE, thread.id, { message: null, strategy: 'squash' });
    await mergeGate.reached;
    const rewinding = rewind(ALICE, thread.id, { run_id: second });
    await restoreGate.reached;
    mergeGate.open();
    const merged = await merging;
    restoreGate.open();
    const rewound = await rewinding;

    assert.deepEqual(merged, { ok: false, error: { code: 'rewind_pending' } }, 'the merge yields to the rewind');
    assert.ok(rewound.ok, JSON.stringify(rewound));
    assert.equal(git(repo, 'rev-parse', 'main'), mainBefore, 'nothing was merged');
    assert.ok(!existsSync(join(worktree.path, 'rewound.txt')), 'the rewind put the files back');
    assert.ok(existsSync(join(worktree.path, 'kept.txt')));
    assert.equal(await storage.writer.pendingRestore(thread.id), null, 'the restore is recorded done');

    // Asked again, the merge lands what the rewind left, and nothing it took back.
    const again = await changes.merge(ALICE, thread.id, { message: null, strategy: 'squash' });
    assert.ok(again.ok, JSON.stringify(again));
    const onMain = git(repo, 'ls-tree', '--name-only', 'main').split('\n');
    assert.ok(onMain.includes('kept.txt'));
    assert.ok(!onMain.includes('rewound.txt'), 'the base never gets the rewound work');
  });
});
