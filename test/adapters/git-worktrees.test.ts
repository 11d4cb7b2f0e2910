import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { gitWorktrees } from '../../adapters/git/worktrees.ts';
import type { Worktree } from '../../domain/model.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import { worktreesContract } from '../contracts/worktrees.contract.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { gatedGit, until } from '../support/paused-git.ts';
import { defineOperatorDrivers, HOSTILE_ATTRIBUTES, plantGitDirectory, ran } from '../support/hostile-worktree.ts';

worktreesContract('git', (root) => gitWorktrees({ root }), (root) => gitWorktrees({ root, binary: '/nonexistent/git' }));

describe('git worktrees: the lock per thread', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // kill -9 of a holder leaves its lock: before locks named their holder, the thread's next turn waited
  // 2 minutes for it and failed (it was broken only at 5 minutes old). test/faults/worktree-kill-restart.test.ts kills a real service.
  it('breaks at once a lock whose holder, a process of this host, no longer runs', { timeout: 30_000 }, async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const id = uuidv7();
    mkdirSync(join(root, '.locks'), { recursive: true });
    symlinkSync(`${hostname()} ${dead} 00000000-0000-4000-8000-000000000000`, join(root, '.locks', id));
    const started = Date.now();
    const made1 = await gitWorktrees({ root }).ensure({ repo, base: 'main', threadId: id });
    assert.ok(made1.ok, JSON.stringify(made1));
    assert.ok(Date.now() - started < 10_000, `waited ${Date.now() - started} ms`);
    assert.deepEqual(readdirSync(join(root, '.locks')), [], 'the lock is gone after use');
  });
});

describe("git worktrees: a merge's recheck", () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // Issue 39: a merge that passed its caller's checks before a rewind was written merged the work the rewind took
  // back; the caller's recheck runs where no restore of the thread can (test/core/merge-rewind-race.test.ts).
  it("asks the caller's recheck first, holding the thread's lock: a failure it answers is the merge's, nothing committed nor merged", async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const worktrees = gitWorktrees({ root });
    const threadId = uuidv7();
    const made1 = await worktrees.ensure({ repo, base: 'main', threadId });
    assert.ok(made1.ok, JSON.stringify(made1));
    write(made1.value.path, 'late.txt', 'not to be merged\n');
    const main = git(repo, 'rev-parse', 'main');
    const tip = git(made1.value.path, 'rev-parse', 'HEAD');
    let held: boolean | null = null;
    const refused = await worktrees.merge(made1.value, {
      message: 'Refused', strategy: 'squash',
      recheck: async () => {
        held = lstatSync(join(root, '.locks', threadId), { throwIfNoEntry: false }) !== undefined;
        return { code: 'rewind_pending' };
      },
    });
    assert.deepEqual(refused, { ok: false, error: { code: 'rewind_pending' } });
    assert.equal(held, true, "the thread's lock is held while the recheck runs");
    assert.equal(git(repo, 'rev-parse', 'main'), main, 'nothing merged');
    assert.equal(git(made1.value.path, 'rev-parse', 'HEAD'), tip, 'nothing committed');
    assert.equal(git(made1.value.path, 'status', '--porcelain'), '?? late.txt');
    const landed = await worktrees.merge(made1.value, { message: 'Landed', strategy: 'squash', recheck: async () => null });
    assert.ok(landed.ok, JSON.stringify(landed));
    assert.equal(git(repo, 'show', 'main:late.txt'), 'not to be merged');
  });
});

describe('git worktrees: an agent that may only write files in its worktree', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const setup = async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    const markers = mkdtempSync(join(tmpdir(), 'console-markers-'));
    made.push(repo, root, markers);
    const worktrees = gitWorktrees({ root });
    const made1 = await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() });
    assert.ok(made1.ok, JSON.stringify(made1));
    return { repo, root, markers, worktrees, worktree: made1.value };
  };

  // The security probe's high finding: a `.git` directory of the agent's own, whose configuration names a clean
  // filter (and fsmonitor, textconv, …), made the next read of the thread's changes run it as the service's user.
  it("never runs a command named by a .git the agent wrote, nor by the operator's drivers its attributes name: changes, diff, lines, checkpoint, merge", async () => {
    const { repo, markers, worktrees, worktree } = await setup();
    defineOperatorDrivers(repo, markers);
    write(repo, 'shared.op', Array.from({ length: 10 }, (_, i) => `row ${i + 1}`).join('\n') + '\n');
    git(repo, 'add', 'shared.op');
    git(repo, 'commit', '--quiet', '-m', 'a file of the operator driver');
    git(worktree.path, 'merge', '--quiet', '--ff-only', 'main');
    // The base and the thread change the same file at either end: a three-way merge of its content.
    write(repo, 'shared.op', readFileSync(join(repo, 'shared.op'), 'utf8').replace('row 1\n', 'row one\n'));
    git(repo, 'commit', '--quiet', '-am', 'the base edits the first row');
    write(worktree.path, 'shared.op', readFileSync(join(worktree.path, 'shared.op'), 'utf8').replace('row 10\n', 'row ten\n'));
    plantGitDirectory(worktree.path, markers);
    write(worktree.path, '.gitattributes', `${HOSTILE_ATTRIBUTES}*.op filter=op diff=op merge=op\n`);
    write(worktree.path, 'feature.txt', 'a feature\n');

    const again = await worktrees.ensure({ repo, base: 'main', threadId: worktree.path.split('/').at(-1)! });
    assert.ok(again.ok, JSON.stringify(again));
    const changes = await worktrees.changes(worktree);
    assert.ok(changes.ok, JSON.stringify(changes));
    const paths = changes.value.files.map((file) => file.path).sort();
    assert.deepEqual(paths, ['.gitattributes', 'feature.txt', 'shared.op'], 'the agent\'s .git is never content');
    const feature = changes.value.files.find((file) => file.path === 'feature.txt')!;
    assert.ok((await worktrees.diff(worktree, feature, 1024 * 1024)).ok);
    assert.ok((await worktrees.diff(worktree, null, 1024 * 1024)).ok);
    assert.deepEqual(await worktrees.lines(worktree, feature, 1, 1), ['a feature']);
    const checkpoint = await worktrees.checkpoint({ threadId: worktree.path.split('/').at(-1)!, path: worktree.path, runId: uuidv7(), messageId: null });
    assert.ok(checkpoint.ok && checkpoint.value !== null, JSON.stringify(checkpoint));
    assert.equal(git(repo, 'show', `${checkpoint.value.commit}:feature.txt`), 'a feature', 'the checkpoint holds the files as they are');
    const merged = await worktrees.merge(worktree, { message: 'Merge the feature', strategy: 'merge' });
    assert.ok(merged.ok, JSON.stringify(merged));
    assert.equal(git(repo, 'show', 'main:shared.op').split('\n')[9], 'row ten', 'merged by git itself');
    assert.equal(readFileSync(join(repo, 'feature.txt'), 'utf8'), 'a feature\n');
    assert.deepEqual(ran(markers), [], 'no planted command ran');
  });

  // Before, a symbolic link as `.git` answered 500 on every changes route; a `.git` naming another thread's admin
  // directory made this thread's merge commit its files on that thread's branch.
  it('puts back a .git replaced by a symbolic link, a directory or a file naming another thread\'s, and works on its own branch', async () => {
    const { repo, root, worktrees, worktree } = await setup();
    const other = await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() });
    assert.ok(other.ok);
    const otherHead = git(repo, 'rev-parse', other.value.branch);
    const dot = join(worktree.path, '.git');
    const expected = readFileSync(dot, 'utf8');
    const id = worktree.path.split('/').at(-1)!;
    const outside = mkdtempSync(join(tmpdir(), 'console-outside-'));
    made.push(outside);
    writeFileSync(join(outside, 'precious'), 'not the console\'s to write\n');
    const tamperings: [string, () => void][] = [
      ['a symbolic link to a file outside', () => { rmSync(dot); symlinkSync(join(outside, 'precious'), dot); }],
      ['a symbolic link to the other thread\'s .git', () => { rmSync(dot, { recursive: true, force: true }); symlinkSync(join(other.value.path, '.git'), dot); }],
      ['a file naming the other thread\'s admin directory', () => { rmSync(dot, { recursive: true, force: true }); writeFileSync(dot, readFileSync(join(other.value.path, '.git'))); }],
      ['an empty directory', () => { rmSync(dot, { recursive: true, force: true }); mkdirSync(dot); }],
    ];
    for (const [what, tamper] of tamperings) {
      write(worktree.path, 'work.txt', `${what}\n`);
      tamper();
      const changes = await worktrees.changes(worktree);
      assert.ok(changes.ok, `${what}: ${JSON.stringify(changes)}`);
      assert.deepEqual(changes.value.files.map((file) => file.path), ['work.txt'], what);
      const again = await worktrees.ensure({ repo, base: 'main', threadId: id });
      assert.ok(again.ok, `${what}: ${JSON.stringify(again)}`);
      assert.equal(lstatSync(dot).isFile(), true, `${what}: a file again`);
      assert.equal(readFileSync(dot, 'utf8'), expected, `${what}: naming its own admin directory`);
    }
    assert.equal(readFileSync(join(outside, 'precious'), 'utf8'), 'not the console\'s to write\n');
    writeFileSync(dot, readFileSync(join(other.value.path, '.git')));
    const merged = await worktrees.merge(worktree, { message: 'Work', strategy: 'squash' });
    assert.ok(merged.ok, JSON.stringify(merged));
    assert.equal(git(repo, 'rev-parse', other.value.branch), otherHead, "the other thread's branch is untouched");
    assert.equal(git(repo, 'show', 'main:work.txt'), 'an empty directory');
    assert.deepEqual(readdirSync(root).filter((name) => name.startsWith('.tampered')).flatMap((name) => readdirSync(join(root, name))), [], 'nothing kept aside');
  });
});

// A sandboxed agent may write its worktree's admin directory (its commits write HEAD, the index and
// COMMIT_EDITMSG there; its `logs` and `config.worktree` are read-only to it, test/adapters/acp-sandbox-mounts.test.ts).
// The review of issue 35 found the console's own git, run later outside the sandbox, following what it left:
// `git commit` truncated whatever COMMIT_EDITMSG linked to and wrote the message there, a HEAD naming `main`
// made a merge merge `main` and a commit land on it, and an index made a FIFO hung every changes read.
describe("git worktrees: what a sandboxed agent leaves in its worktree's admin directory", () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('writes nothing through a link there, follows no HEAD there and waits on no FIFO there: merge, sweep, changes and checkpoint', { timeout: 60_000 }, async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    const outside = mkdtempSync(join(tmpdir(), 'console-victims-'));
    made.push(repo, root, outside);
    const worktrees = gitWorktrees({ root });
    const plant = async () => {
      const made1 = await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() });
      assert.ok(made1.ok, JSON.stringify(made1));
      const worktree = made1.value;
      const admin = git(worktree.path, 'rev-parse', '--path-format=absolute', '--git-dir');
      const victims = ['message'].map((name) => {
        const victim = join(outside, `${name}-${worktree.branch.replace('/', '-')}`);
        writeFileSync(victim, 'the service\'s own file\n');
        return victim;
      });
      const link = (path: string, victim: string) => {
        mkdirSync(dirname(path), { recursive: true });
        rmSync(path, { force: true });
        symlinkSync(victim, path);
      };
      link(join(admin, 'COMMIT_EDITMSG'), victims[0]!);
      write(worktree.path, `work-${worktree.branch.replace('/', '-')}.txt`, 'work\n');
      return { worktree, admin, victims };
    };
    const untouched = (victims: readonly string[]) => {
      for (const victim of victims) assert.equal(readFileSync(victim, 'utf8'), 'the service\'s own file\n', `${victim} written through a link`);
    };

    const a = await plant();
    // HEAD repointed at the base: the merge still merges the thread's branch, and commits onto it, not onto main.
    writeFileSync(join(a.admin, 'HEAD'), 'ref: refs/heads/main\n');
    const mainBefore = git(repo, 'rev-parse', 'main');
    const merged = await worktrees.merge(a.worktree, { message: 'Merge the work', strategy: 'squash' });
    untouched(a.victims);
    if (merged.ok) {
      assert.equal(git(repo, 'show', `main:work-${a.worktree.branch.replace('/', '-')}.txt`), 'work');
      assert.equal(git(repo, 'rev-parse', 'main^'), mainBefore, 'main moved by the one squashed commit');
    } else assert.equal(merged.error.code, 'worktree_tampered', JSON.stringify(merged));

    const b = await plant();
    await worktrees.sweep(0);
    untouched(b.victims);

    const c = await plant();
    rmSync(join(c.admin, 'index'), { force: true });
    execFileSync('mkfifo', [join(c.admin, 'index')]);
    const changes = await worktrees.changes(c.worktree);
    assert.ok(changes.ok || changes.error.code === 'worktree_tampered', JSON.stringify(changes));
    untouched(c.victims);

    // A checkpoint, at a turn's end, neither: its index a FIFO, its COMMIT_EDITMSG a link.
    const d = await plant();
    rmSync(join(d.admin, 'index'), { force: true });
    execFileSync('mkfifo', [join(d.admin, 'index')]);
    const id = d.worktree.path.split('/').at(-1)!;
    const checkpoint = await worktrees.checkpoint({ threadId: id, path: d.worktree.path, runId: uuidv7(), messageId: null });
    assert.ok(checkpoint.ok && checkpoint.value !== null, JSON.stringify(checkpoint));
    assert.equal(git(repo, 'show', `${checkpoint.value.commit}:work-${d.worktree.branch.replace('/', '-')}.txt`), 'work');
    untouched(d.victims);
  });
});

describe('git worktrees: a worktree git no longer holds', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // A read between a removal (by hand, or a sweep of another instance) and the next check threw: a 500.
  it('answers worktree_tampered on every read and merge until the next check makes it again', async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const worktrees = gitWorktrees({ root });
    const id = uuidv7();
    const made1 = await worktrees.ensure({ repo, base: 'main', threadId: id });
    assert.ok(made1.ok);
    const worktree = made1.value;
    git(repo, 'worktree', 'remove', '--force', worktree.path);
    const answers = [
      await worktrees.changes(worktree),
      await worktrees.diff(worktree, null, 1024),
      await worktrees.merge(worktree, { message: 'Gone', strategy: 'squash' }),
    ];
    for (const answer of answers) assert.equal(!answer.ok && answer.error.code, 'worktree_tampered', JSON.stringify(answer));
    assert.equal(await worktrees.lines(worktree, { path: 'README.md', status: 'modified', additions: 1, deletions: 0, binary: false }, 1, 1), null);
    assert.ok((await worktrees.ensure({ repo, base: 'main', threadId: id })).ok);
    assert.ok((await worktrees.changes(worktree)).ok);
  });
});

describe('git worktrees: many threads of one repository made at once', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('makes each: git worktree add reads every worktree of the repository, and died on one another add was writing', async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const worktrees = gitWorktrees({ root });
    // The race is a matter of timing: rounds of a dozen at once made it show within a few rounds on the code before.
    for (let round = 1; round <= 4; round += 1) {
      const threads = Array.from({ length: 12 }, () => uuidv7());
      const results = await Promise.all(threads.map((threadId) => worktrees.ensure({ repo, base: 'main', threadId }).catch((error: unknown) => String(error))));
      assert.deepEqual(results.filter((result) => typeof result === 'string' || !result.ok), [], `round ${round}`);
    }
    const listed = git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((line) => line.startsWith('worktree ')).length;
    assert.equal(listed, 1 + 4 * 12);
  });
});

describe('git worktrees: two merges into one base at once', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // The probe's low finding: a merge that found the base's checkout while another merge was moving it (the base's
  // ref moved, the checkout's index not yet) answered base_checkout_dirty, though nothing in the checkout was
  // anyone's uncommitted work; issue 41: it answered base_moved then, though merging after the first was the truthful
  // answer. The first merge is held just before it moves the checkout (a git that waits there); the second waits
  // for the base's lock, and lands once the first is done.
  it("lands a merge after another that is moving the base's checkout: no base_checkout_dirty, no base_moved", { timeout: 60_000 }, async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    const gate = gatedGit('read-tree -u');
    made.push(repo, root, dirname(gate.binary));
    const held = gitWorktrees({ root, binary: gate.binary });
    const free = gitWorktrees({ root });
    const [a, b] = await Promise.all([free.ensure({ repo, base: 'main', threadId: uuidv7() }), free.ensure({ repo, base: 'main', threadId: uuidv7() })]);
    assert.ok(a.ok && b.ok);
    write(a.value.path, 'first.txt', 'first\n');
    write(b.value.path, 'second.txt', 'second\n');
    const first = held.merge(a.value, { message: 'First', strategy: 'squash' });
    await until(gate.reached, 30_000, 'the first merge about to move the checkout of main');
    let secondDone = false;
    const second = free.merge(b.value, { message: 'Second', strategy: 'squash' }).finally(() => { secondDone = true; });
    // The second has committed its worktree (its thread's lock is its own) and now waits for main's.
    await until(() => git(b.value.path, 'status', '--porcelain') === '', 30_000, 'the second merge committed its worktree');
    assert.equal(secondDone, false, 'the second waits while the first holds main');
    gate.release();
    const [landed, later] = await Promise.all([first, second]);
    assert.ok(landed.ok, JSON.stringify(landed));
    assert.ok(later.ok, JSON.stringify(later));
    assert.equal(git(repo, 'rev-parse', 'main'), later.value.commit);
    assert.equal(git(repo, 'rev-parse', 'main~1'), landed.value.commit);
    assert.equal(git(repo, 'status', '--porcelain'), '');
    assert.deepEqual([readFileSync(join(repo, 'first.txt'), 'utf8'), readFileSync(join(repo, 'second.txt'), 'utf8')], ['first\n', 'second\n']);
  });
});

// Probes of the security review beyond its two findings: what else an agent that may write any file of its
// worktree can put there, read back through the changes routes (changes, a file's diff, its lines) and merged.
describe('git worktrees: what an agent may write in its worktree', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));
  const setup = async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const worktrees = gitWorktrees({ root });
    const thread = async () => {
      const made1 = await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() });
      assert.ok(made1.ok, JSON.stringify(made1));
      return made1.value;
    };
    return { repo, root, worktrees, thread };
  };
  const files = async (worktrees: Worktrees, worktree: Worktree) => {
    const changes = await worktrees.changes(worktree);
    assert.ok(changes.ok, JSON.stringify(changes));
    return changes.value.files;
  };

  it('shows a symbolic link out of the worktree as the name it holds, never what it points at; a FIFO is skipped, not waited on', async () => {
    const { worktrees, thread } = await setup();
    const worktree = await thread();
    const outside = mkdtempSync(join(tmpdir(), 'console-outside-'));
    made.push(outside);
    write(outside, 'secret.txt', 'the service user\'s secret\n');
    symlinkSync(join(outside, 'secret.txt'), join(worktree.path, 'link'));
    symlinkSync(outside, join(worktree.path, 'dir-link'));
    execFileSync('mkfifo', [join(worktree.path, 'pipe')]);
    const listed = await files(worktrees, worktree);
    assert.deepEqual(listed.map((file) => file.path).sort(), ['dir-link', 'link'], 'nothing under the linked directory, no FIFO');
    for (const file of listed) {
      const diff = await worktrees.diff(worktree, file, 1024 * 1024);
      assert.ok(diff.ok && diff.value.includes('new file mode 120000') && !diff.value.includes('secret\n'), JSON.stringify(diff));
    }
    assert.deepEqual(await worktrees.lines(worktree, listed.find((file) => file.path === 'link')!, 1, 5), [join(outside, 'secret.txt')]);
    const merged = await worktrees.merge(worktree, { message: 'Links', strategy: 'squash' });
    assert.ok(merged.ok, JSON.stringify(merged));
  });

  // A path holding a tab came out of `--numstat -z` cut at its tab: the file was counted 0 lines.
  it('lists, counts and diffs names with a newline, a tab, quotes, leading dashes or a space exactly, never as an option', async () => {
    const { worktrees, thread } = await setup();
    const worktree = await thread();
    const marker = join(mkdtempSync(join(tmpdir(), 'console-markers-')), 'written');
    made.push(dirname(marker));
    const names = ['-rf', `--output=${marker}`, 'a\nb.txt', 'tab\there.txt', 'q"uote\'s', ' lead', '-', '--'];
    for (const name of names) write(worktree.path, name, 'one\ntwo\n');
    const listed = await files(worktrees, worktree);
    assert.deepEqual(listed.map((file) => [file.path, file.additions]).sort(), names.map((name) => [name, 2]).sort());
    for (const file of listed) {
      const diff = await worktrees.diff(worktree, file, 1024 * 1024);
      assert.ok(diff.ok && diff.value.endsWith('+one\n+two\n'), `${JSON.stringify(file.path)}: ${JSON.stringify(diff)}`);
      assert.equal((diff.ok ? diff.value : '').match(/^diff --git/gm)?.length, 1, `${JSON.stringify(file.path)}: its diff alone`);
      assert.deepEqual(await worktrees.lines(worktree, file, 1, 2), ['one', 'two']);
    }
    assert.equal(existsSync(marker), false, 'no file name was taken for an option');
  });

  // Before, each made git fail (`invalid path '.GIT/config'`, `failed to encode`) and the changes routes answered 500.
  it('answers worktree_unreadable for files git refuses to stage (.GIT/config, a failing working-tree-encoding), and reads again once they go', async () => {
    const { worktrees, thread } = await setup();
    const worktree = await thread();
    write(worktree.path, 'ok.txt', 'ok\n');
    const refusals: [string, () => void, () => void][] = [
      ['.GIT/config', () => write(worktree.path, '.GIT/config', '[core]\n'), () => rmSync(join(worktree.path, '.GIT'), { recursive: true })],
      ['.gitattributes', () => write(worktree.path, '.gitattributes', '* working-tree-encoding=NO-SUCH-ENCODING\n'), () => rmSync(join(worktree.path, '.gitattributes'))],
    ];
    for (const [what, plant, remove] of refusals) {
      plant();
      const changes = await worktrees.changes(worktree);
      assert.equal(!changes.ok && changes.error.code, 'worktree_unreadable', `${what}: ${JSON.stringify(changes)}`);
      const diff = await worktrees.diff(worktree, null, 1024 * 1024);
      assert.equal(!diff.ok && diff.error.code, 'worktree_unreadable', what);
      assert.equal(await worktrees.lines(worktree, { path: 'ok.txt', status: 'added', additions: 1, deletions: 0, binary: false }, 1, 1), null, what);
      const merge = await worktrees.merge(worktree, { message: 'Refused', strategy: 'squash' });
      assert.equal(!merge.ok && merge.error.code, 'worktree_unreadable', what);
      remove();
      assert.deepEqual((await files(worktrees, worktree)).map((file) => file.path), ['ok.txt'], `${what}: gone, read again`);
    }
  });

  // A `.gitmodules` naming `update = !command` (git refuses it: it dies reading it) merged into the base made every
  // thread's changes on the repository answer 500 after: a diff with a submodule read `.gitmodules` for its settings.
  it("never reads a .gitmodules an agent wrote, even merged into the base, nor runs a nested repository's configuration", async () => {
    const { repo, worktrees, thread } = await setup();
    const worktree = await thread();
    const markers = mkdtempSync(join(tmpdir(), 'console-markers-'));
    made.push(markers);
    const sub = join(worktree.path, 'sub');
    mkdirSync(sub);
    git(sub, 'init', '--quiet');
    write(sub, 'f.txt', 'f\n');
    git(sub, 'add', 'f.txt');
    git(sub, 'commit', '--quiet', '-m', 'nested');
    writeFileSync(join(sub, '.git', 'config'), `[core]\n\tfsmonitor = "touch '${markers}/fsmonitor'"\n[filter "e"]\n\tclean = "touch '${markers}/clean'; cat"\n`);
    write(sub, '.gitattributes', '* filter=e\n');
    write(sub, 'f.txt', 'changed\n');
    write(worktree.path, '.gitmodules', `[submodule "sub"]\n\tpath = sub\n\turl = ext::sh -c touch% ${markers}/url\n\tupdate = !touch ${markers}/update\n`);
    assert.deepEqual((await files(worktrees, worktree)).map((file) => file.path).sort(), ['.gitmodules', 'sub']);
    const merged = await worktrees.merge(worktree, { message: 'A submodule', strategy: 'merge' });
    assert.ok(merged.ok, JSON.stringify(merged));
    assert.equal(git(repo, 'ls-tree', 'main', 'sub').split(/\s/)[1], 'commit');
    // The nested repository moves on: its commit id changes, and `.gitmodules` is now the base's too.
    // (By plumbing: the test's own git in the nested repository would run what its configuration names.)
    git(sub, 'update-ref', 'HEAD', git(sub, 'commit-tree', git(sub, 'rev-parse', 'HEAD^{tree}'), '-p', 'HEAD', '-m', 'nested moves'));
    const moved = await files(worktrees, worktree);
    assert.deepEqual(moved.map((file) => [file.path, file.status]), [['sub', 'modified']]);
    const subDiff = await worktrees.diff(worktree, moved[0]!, 1024 * 1024);
    assert.ok(subDiff.ok && /\+Subproject commit [0-9a-f]{40}/.test(subDiff.value), JSON.stringify(subDiff));
    const next = await thread();
    write(next.path, 'later.txt', 'later\n');
    assert.deepEqual((await files(worktrees, next)).map((file) => file.path), ['later.txt']);
    const all = await worktrees.diff(next, null, 1024 * 1024);
    assert.ok(all.ok, JSON.stringify(all));
    const again = await worktrees.merge(next, { message: 'Later', strategy: 'squash' });
    assert.ok(again.ok, JSON.stringify(again));
    assert.deepEqual(ran(markers), []);
  });
});

describe('git worktrees: a listing past its bound', () => {
  const made: string[] = [];
  after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  // An agent writes as many files, with names as long, as it likes: a listing over its bound (32 MiB of names) threw
  // past git's output bound, a 500. Here the bound is 4 KiB, and 200 files of 40-character names pass it.
  it('answers changes_too_large, and a diff of one file still works', async () => {
    const repo = gitRepository();
    const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
    made.push(repo, root);
    const worktrees = gitWorktrees({ root, maxListBytes: 4096 });
    const made1 = await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() });
    assert.ok(made1.ok);
    for (let i = 0; i < 200; i += 1) write(made1.value.path, `many/file-${String(i).padStart(3, '0')}-${'x'.repeat(24)}.txt`, `${i}\n`);
    const changes = await worktrees.changes(made1.value);
    assert.equal(!changes.ok && changes.error.code, 'changes_too_large', JSON.stringify(changes).slice(0, 200));
    const one = await worktrees.diff(made1.value, { path: `many/file-007-${'x'.repeat(24)}.txt`, status: 'added', additions: 1, deletions: 0, binary: false }, 1024 * 1024);
    assert.ok(one.ok && one.value.includes('+7\n'), JSON.stringify(one));
  });
});
