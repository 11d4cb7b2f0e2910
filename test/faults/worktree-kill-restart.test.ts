// Issue 27: a thread's worktree is made in steps (`git worktree add` at a temporary path, then `git worktree move`
// into place) and a merge too (commit, merge-tree, commit-tree, update-ref of the base, the base's checkout moved,
// a squashed branch moved). kill -9 of a real service process at one of those steps (a `git` on its PATH that
// stops there: test/support/paused-git.ts), then a restart on the same storage and data directory: no broken
// worktree, `base` merged or untouched (never half), and the thread usable.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it, type TestContext } from 'node:test';
import { ask } from '../support/http.ts';
import { forEachFaultStorage, startServiceProcess, type FaultStorage } from '../support/fault-service.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { pausedGit, until } from '../support/paused-git.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';

/** The repository of the repository project `repo-web`, made once for the suite's world file. */
const repo = gitRepository('console-fault-repo-');
const PROJECTS = [{ name: 'repo-web', repo, base: 'main' }];
after(() => rmSync(repo, { recursive: true, force: true }));

type Service = Awaited<ReturnType<typeof startServiceProcess>>;

async function stopped(service: Service): Promise<void> {
  if (service.child.exitCode !== null || service.child.signalCode !== null) return;
  service.child.kill('SIGTERM');
  await once(service.child, 'exit');
}

async function killed(service: Service): Promise<void> {
  service.child.kill('SIGKILL');
  await once(service.child, 'exit');
}

/** Waits until no turn runs on the thread. */
async function idle(port: number, threadId: string): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    const conversations = (await ask(port, { path: `${P}/${threadId}/conversations`, headers: ALICE })).json() as { turn_running: boolean }[];
    if (!conversations.some((c) => c.turn_running)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.fail('the turn did not end');
}

/** What the repository lists as worktrees of `branch` (porcelain lines of each), and whether any is prunable or locked. */
function worktreesOf(branch: string): { path: string; flags: string[] }[] {
  const out = git(repo, 'worktree', 'list', '--porcelain');
  return out.split('\n\n').map((block) => block.split('\n'))
    .filter((lines) => lines.includes(`branch refs/heads/${branch}`))
    .map((lines) => ({ path: lines[0]!.slice('worktree '.length), flags: lines.filter((l) => /^(prunable|locked)/.test(l)) }));
}

/** A thread's worktree is whole: at its path, on its branch, listed once by the repository, nothing else of it left. */
function assertWhole(worktreesDir: string, threadId: string, path: string): void {
  const branch = `console/${threadId}`;
  assert.equal(path, join(worktreesDir, threadId));
  assert.equal(git(path, 'symbolic-ref', 'HEAD'), `refs/heads/${branch}`);
  assert.equal(git(path, 'rev-parse', '--show-toplevel'), path);
  assert.deepEqual(worktreesOf(branch), [{ path, flags: [] }], 'the repository knows one worktree of the branch, not prunable');
  assert.deepEqual(readdirSync(worktreesDir).filter((name) => name.startsWith('.tmp-') || name.startsWith('.broken-')), [], 'no half-made worktree left');
  assert.deepEqual(readdirSync(join(worktreesDir, '.locks')), [], 'no lock left');
}

/**
 * kill -9 between `git worktree add` (at a temporary path) and `git worktree move` (into place), during
 * the thread's first directive: the restarted service's next turn on the thread repairs it (the
 * half-made worktree removed, the branch checked out again at the thread's path) and runs there. What
 * would break it: `make` not removing the branch's worktree at the temporary path (the add then fails,
 * the branch is checked out elsewhere), or a lock the killed process held that is honoured until it is
 * stale (5 minutes: the directive waits 2 minutes, then fails).
 */
function killDuringCreation(name: string, storage: FaultStorage) {
  it(`${name}: kill -9 between worktree add and move, then a restart: the next turn works in a whole worktree`, { timeout: 180_000 }, async (t: TestContext) => {
    const { env, cleanup } = await storage();
    t.after(cleanup);
    const paused = pausedGit('worktree move');
    t.after(() => rmSync(paused.dir, { recursive: true, force: true }));
    const first = await startServiceProcess({ ...env, PATH: paused.path(process.env.PATH ?? '') });
    t.after(() => stopped(first));
    const key = randomUUID();
    const pending = ask(first.port, { method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Start', model: 'claude:opus', project: 'repo-web' }) }).catch((error: unknown) => error);
    await until(paused.reached, 60_000, 'git worktree move');
    await killed(first);
    await pending;
    const worktreesDir = join(env.DATA_DIR!, 'worktrees');
    // The kill landed halfway: a worktree of the thread's branch at a temporary path, none at the thread's.
    const half = readdirSync(worktreesDir).filter((n) => n.startsWith('.tmp-'));
    assert.equal(half.length, 1, `a half-made worktree: ${readdirSync(worktreesDir).join(', ')}`);

    const second = await startServiceProcess(env);
    t.after(() => stopped(second));
    const again = await ask(second.port, { method: 'POST', path: `${P}/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Again' }) });
    assert.equal(again.status, 202, again.text);
    const { thread_id: threadId, conversation_id: conversationId } = again.json() as { thread_id: string; conversation_id: string };
    await idle(second.port, threadId);
    const row = (await ask(second.port, { path: `${P}/${threadId}`, headers: ALICE })).json() as { worktree: { path: string; branch: string } | null };
    assert.ok(row.worktree !== null, 'the turn recorded the worktree');
    assertWhole(worktreesDir, threadId, row.worktree.path);
    const runs = (await ask(second.port, { path: `${P}/${threadId}/conversations/${conversationId}/runs?limit=10`, headers: ALICE })).json().items as { directory: string; status: string }[];
    assert.deepEqual(runs.map((run) => [run.directory, run.status]), [[row.worktree.path, 'succeeded']], 'the turn ran in the worktree');
    // Usable: what the thread writes there is its change.
    write(row.worktree.path, 'after-restart.txt', 'made after the restart\n');
    const changes = (await ask(second.port, { path: `${P}/${threadId}/changes`, headers: ALICE })).json() as { files: { path: string }[] };
    assert.deepEqual(changes.files.map((f) => f.path), ['after-restart.txt']);
  });
}

describe('kill -9 during worktree creation, then a restart', () => {
  forEachFaultStorage(killDuringCreation, { projects: PROJECTS });
});

/** The steps of a merge a kill lands between, with what the base holds after the restart and before a second merge. */
const MERGE_STEPS = [
  // Before the base's ref moves: the base untouched. Robust before the journal too (the ref's compare-and-swap
  // is the one step that changes the base); only the killed process's lock, honoured until stale, broke it.
  { step: 'update-ref', strategy: 'squash', merged: false },
  // The base's ref moved, its checkout not yet: finished on restart (without the journal the checkout shows the merge undone).
  { step: 'read-tree -u', strategy: 'squash', merged: true },
  { step: 'read-tree -u', strategy: 'merge', merged: true },
  // The base merged, the squashed branch not yet moved onto it (its worktree's `read-tree -m -u`): finished on
  // restart (without, the thread still lists the merged files).
  { step: 'read-tree -m -u', strategy: 'squash', merged: true },
] as const;

/**
 * kill -9 of the service at a step of `POST /changes/merge`, then a restart: the base (the repository's
 * `main`, checked out in the repository itself) either holds the thread's file, its checkout clean and
 * showing it, or is as it was; the thread's changes read and a second merge lands it (or answers that
 * nothing is left). What would break it: the journal under `worktrees/.merges` not written before the
 * ref moves, or not finished before a read or a merge (the checkout of `main` then shows the merged
 * file staged for deletion, or a squashed thread goes on listing what was merged); and a lock the
 * killed process held honoured until it is stale (the second merge waits 2 minutes, then fails).
 */
function killDuringMerge(name: string, storage: FaultStorage) {
  for (const { step, strategy, merged } of MERGE_STEPS) {
    it(`${name}: kill -9 of a merge (${strategy}) before \`${step}\`, then a restart: the base merged or untouched, the thread usable`, { timeout: 180_000 }, async (t: TestContext) => {
      const { env, cleanup } = await storage();
      t.after(cleanup);
      // The suite's tests share the repository: each starts from a consistent checkout, whatever a failed one left.
      git(repo, 'reset', '--quiet', '--hard');
      const paused = pausedGit(step);
      t.after(() => rmSync(paused.dir, { recursive: true, force: true }));
      const first = await startServiceProcess({ ...env, PATH: paused.path(process.env.PATH ?? '') });
      t.after(() => stopped(first));
      const made = await ask(first.port, { method: 'POST', path: `${P}/${randomUUID()}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Start', model: 'claude:opus', project: 'repo-web' }) });
      assert.equal(made.status, 202, made.text);
      const { thread_id: threadId } = made.json() as { thread_id: string };
      await idle(first.port, threadId);
      const worktreesDir = join(env.DATA_DIR!, 'worktrees');
      const path = join(worktreesDir, threadId);
      const file = `merged-${threadId}.txt`;
      write(path, file, `from ${threadId}\n`);
      const before = git(repo, 'rev-parse', 'main');
      const pending = ask(first.port, { method: 'POST', path: `${P}/${threadId}/changes/merge`, headers: ALICE, body: JSON.stringify({ strategy }) }).catch((error: unknown) => error);
      await until(paused.reached, 60_000, `git ${step}`);
      await killed(first);
      await pending;

      const second = await startServiceProcess(env);
      t.after(() => stopped(second));
      const changes = await ask(second.port, { path: `${P}/${threadId}/changes`, headers: ALICE });
      assert.equal(changes.status, 200, changes.text);
      const listed = (changes.json() as { files: { path: string }[] }).files.map((f) => f.path);
      // Never half: the base's ref, its checkout's files and its index agree.
      assert.equal(git(repo, 'status', '--porcelain'), '', "the base's checkout is clean");
      const after = git(repo, 'rev-parse', 'main');
      if (merged) {
        assert.notEqual(after, before, 'the base took the merge');
        assert.equal(git(repo, 'show', `main:${file}`), `from ${threadId}`);
        assert.equal(existsSync(join(repo, file)), true, "the base's checkout shows the merged file");
        if (strategy === 'squash') assert.deepEqual(listed, [], 'a squashed thread lists nothing once merged');
      } else {
        assert.equal(after, before, 'the base is untouched');
        assert.equal(existsSync(join(repo, file)), false);
        assert.deepEqual(listed, [file], 'the thread still holds its change');
      }
      const again = await ask(second.port, { method: 'POST', path: `${P}/${threadId}/changes/merge`, headers: ALICE, body: JSON.stringify({ strategy }) });
      assert.equal(again.status, 200, again.text);
      assert.equal(git(repo, 'show', `main:${file}`), `from ${threadId}`);
      assert.equal(git(repo, 'status', '--porcelain'), '');
      if (merged) assert.equal(git(repo, 'rev-parse', 'main'), after, 'nothing left to merge: no second commit');
      const left = (await ask(second.port, { path: `${P}/${threadId}/changes`, headers: ALICE })).json() as { files: unknown[]; ahead: number };
      if (strategy === 'squash') assert.deepEqual(left.files, []);
      const journals = join(worktreesDir, '.merges');
      assert.deepEqual(existsSync(journals) ? readdirSync(journals) : [], [], 'no journal left');
      assertWhole(worktreesDir, threadId, path);
      // The thread takes another turn in its worktree.
      const turn = await ask(second.port, { method: 'POST', path: `${P}/${threadId}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Go on' }) });
      assert.equal(turn.status, 202, turn.text);
      await idle(second.port, threadId);
    });
  }
}

describe('kill -9 during a merge, then a restart', () => {
  forEachFaultStorage(killDuringMerge, { projects: PROJECTS });
});
