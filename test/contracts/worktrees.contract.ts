import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import type { Worktree } from '../../domain/model.ts';
import type { Worktrees } from '../../ports/worktrees.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';

/** Builds the adapter under test, keeping worktrees under `root`. */
export type WorktreesFactory = (root: string) => Worktrees;

const unwrap = <T>(result: { ok: true; value: T } | { ok: false; error: unknown }): T => {
  if (!result.ok) assert.fail(`expected success, got ${JSON.stringify(result.error)}`);
  return result.value;
};

/** The Worktrees contract (ports/worktrees.ts), on real repositories made in a temporary directory. */
export function worktreesContract(name: string, factory: WorktreesFactory, unavailable: (root: string) => Worktrees): void {
  describe(`worktrees contract: ${name}`, () => {
    const made: string[] = [];
    after(() => {
      for (const dir of made) rmSync(dir, { recursive: true, force: true });
    });
    /**
     * A bare repository made from `repo`, reached by URL as a shared remote is (`file://<shared>`), and a second
     * instance's root; the remote goes away and comes back by renaming it.
     */
    const sharedRemote = (repo: string) => {
      const remote = mkdtempSync(join(tmpdir(), 'console-remote-'));
      const otherRoot = mkdtempSync(join(tmpdir(), 'console-worktrees-b-'));
      made.push(remote, otherRoot);
      const shared = join(remote, 'shared.git');
      git(remote, 'clone', '--bare', '--quiet', repo, shared);
      return { remote, otherRoot, shared, url: `file://${shared}` };
    };
    const setup = () => {
      const repo = gitRepository();
      const root = mkdtempSync(join(tmpdir(), 'console-worktrees-'));
      made.push(repo, root);
      return { repo, root, worktrees: factory(root) };
    };

    it('makes a thread its worktree on console/<id> from the base, once, whoever asks at the same time', async () => {
      const { repo, root, worktrees } = setup();
      const id = uuidv7();
      const [a, b] = await Promise.all([worktrees.ensure({ repo, base: 'main', threadId: id }), worktrees.ensure({ repo, base: 'main', threadId: id })]);
      const worktree = unwrap(a);
      assert.deepEqual(unwrap(b), worktree);
      assert.deepEqual(worktree, { branch: `console/${id}`, base: 'main', path: join(root, id) });
      assert.equal(git(worktree.path, 'symbolic-ref', 'HEAD'), `refs/heads/console/${id}`);
      assert.equal(readFileSync(join(worktree.path, 'README.md'), 'utf8'), '# Demo\n');
      assert.deepEqual(unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id })), worktree, 'again: the same');
      // A second adapter (another instance) over the same root finds it too.
      assert.deepEqual(unwrap(await factory(root).ensure({ repo, base: 'main', threadId: id })), worktree);
    });

    it('repairs a half-made worktree and keeps its branch: a removed directory, or junk at its path', async () => {
      const { repo, worktrees } = setup();
      const id = uuidv7();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id }));
      write(worktree.path, 'work.txt', 'committed work\n');
      git(worktree.path, 'add', 'work.txt');
      git(worktree.path, 'commit', '--quiet', '-m', 'work');
      rmSync(worktree.path, { recursive: true, force: true });
      assert.deepEqual(unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id })), worktree);
      assert.equal(readFileSync(join(worktree.path, 'work.txt'), 'utf8'), 'committed work\n', 'the branch was checked out again');
      // A crash between making the directory and checking it out: a directory that is no worktree.
      rmSync(worktree.path, { recursive: true, force: true });
      mkdirSync(worktree.path);
      writeFileSync(join(worktree.path, 'stray.txt'), 'left over');
      assert.deepEqual(unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id })), worktree);
      assert.equal(existsSync(join(worktree.path, 'stray.txt')), false);
      assert.equal(readFileSync(join(worktree.path, 'work.txt'), 'utf8'), 'committed work\n');
      // A worktree removed by hand is forgotten by a prune; its branch stays.
      rmSync(worktree.path, { recursive: true, force: true });
      unwrap(await worktrees.prune(repo));
      assert.doesNotMatch(git(repo, 'worktree', 'list', '--porcelain'), new RegExp(id));
      assert.equal(git(repo, 'rev-parse', '--verify', '--quiet', `refs/heads/console/${id}`).length, 40);
      const plain = mkdtempSync(join(tmpdir(), 'console-plain-'));
      made.push(plain);
      const refused = await worktrees.prune(plain);
      assert.equal(!refused.ok && refused.error.code, 'repository_unavailable');
    });

    it('two instances over one root make one worktree; a crash after the branch was made, before the move, is repaired', async () => {
      const { repo, root } = setup();
      const id = uuidv7();
      const results = await Promise.all([factory(root), factory(root), factory(root)].map((w) => w.ensure({ repo, base: 'main', threadId: id })));
      const made = results.map(unwrap);
      assert.deepEqual(made[1], made[0]);
      assert.deepEqual(made[2], made[0]);
      assert.equal(git(repo, 'worktree', 'list', '--porcelain').split('\n').filter((line) => line === `branch refs/heads/console/${id}`).length, 1);

      // What a crash leaves: the branch made and checked out at a temporary path, nothing at the thread's path.
      const other = uuidv7();
      const temporary = join(root, `.tmp-${other}-crashed`);
      git(repo, 'worktree', 'add', '--quiet', '-b', `console/${other}`, temporary, 'main');
      const repaired = unwrap(await factory(root).ensure({ repo, base: 'main', threadId: other }));
      assert.equal(repaired.path, join(root, other));
      assert.equal(git(repaired.path, 'symbolic-ref', 'HEAD'), `refs/heads/console/${other}`);
      assert.equal(existsSync(temporary), false, 'the temporary worktree is gone');
    });

    it("starts a fork's branch from its parent's, and from the base when the parent's branch is gone", async () => {
      const { repo, worktrees } = setup();
      const parent = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(parent.path, 'parent.txt', 'work so far\n');
      git(parent.path, 'add', 'parent.txt');
      git(parent.path, 'commit', '--quiet', '-m', 'parent work');
      const fork = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7(), from: parent.branch }));
      assert.equal(fork.base, 'main');
      assert.equal(readFileSync(join(fork.path, 'parent.txt'), 'utf8'), 'work so far\n');
      assert.deepEqual(unwrap(await worktrees.changes(fork)).files.map((f) => f.path), ['parent.txt'], 'against the base, as every thread');
      const orphan = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7(), from: 'console/gone' }));
      assert.equal(existsSync(join(orphan.path, 'parent.txt')), false);
    });

    it('sweeps worktrees unused for longer than asked, their work committed on their branch first, and makes them again', async () => {
      const { repo, worktrees } = setup();
      const old = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      const fresh = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(old.path, 'unsaved.txt', 'not committed\n');
      const longAgo = new Date(Date.now() - 40 * 86_400_000);
      utimesSync(old.path, longAgo, longAgo);
      assert.deepEqual(await worktrees.sweep(30 * 86_400_000), [old.path.split('/').at(-1)]);
      assert.equal(existsSync(old.path), false);
      assert.equal(existsSync(fresh.path), true, 'a worktree used lately stays');
      assert.equal(git(repo, 'show', `${old.branch}:unsaved.txt`), 'not committed', 'what it held is on its branch');
      assert.deepEqual(unwrap(await worktrees.ensure({ repo, base: 'main', threadId: old.path.split('/').at(-1)! })), old);
      assert.equal(readFileSync(join(old.path, 'unsaved.txt'), 'utf8'), 'not committed\n');
      assert.deepEqual(await worktrees.sweep(30 * 86_400_000), [], 'made again: used now');
    });

    it('refuses a directory that is no repository, a missing base, and answers git_unavailable without git', async () => {
      const { repo, root, worktrees } = setup();
      const plain = mkdtempSync(join(tmpdir(), 'console-plain-'));
      made.push(plain);
      const notRepo = await worktrees.ensure({ repo: plain, base: 'main', threadId: uuidv7() });
      assert.equal(!notRepo.ok && notRepo.error.code, 'repository_unavailable');
      assert.match(!notRepo.ok ? notRepo.error.detail ?? '' : '', /is not a git repository/);
      const noBase = await worktrees.ensure({ repo, base: 'nope', threadId: uuidv7() });
      assert.equal(!noBase.ok && noBase.error.code, 'repository_unavailable');
      assert.match(!noBase.ok ? noBase.error.detail ?? '' : '', /has no branch nope/);
      const missing = await unavailable(root).ensure({ repo, base: 'main', threadId: uuidv7() });
      assert.equal(!missing.ok && missing.error.code, 'git_unavailable');
    });

    it("lists what the worktree changed against the merge base: committed, uncommitted and untracked", async () => {
      const { repo, worktrees } = setup();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      const at = worktree.path;
      write(at, 'src/app.js', readFileSync(join(at, 'src/app.js'), 'utf8').replace('line 5\n', 'line five\nline 5.5\n'));
      git(at, 'commit', '--quiet', '-am', 'committed edit');
      git(at, 'mv', 'old-name.txt', 'new-name.txt');
      git(at, 'rm', '--quiet', 'remove-me.txt');
      write(at, 'untracked.txt', 'new\nfile\n');
      write(at, 'image.bin', Buffer.from([0, 1, 2, 3, 0, 255]));
      // The base moves on too: one commit behind.
      write(repo, 'base-only.txt', 'base\n');
      git(repo, 'add', 'base-only.txt');
      git(repo, 'commit', '--quiet', '-m', 'base moves');
      const changes = unwrap(await worktrees.changes(worktree));
      assert.equal(changes.base, 'main');
      assert.equal(changes.branch, worktree.branch);
      assert.equal(changes.ahead, 1);
      assert.equal(changes.behind, 1);
      // The rename, the removal, the untracked text and the binary file are in no commit yet; src/app.js is.
      assert.equal(changes.uncommitted, 4);
      const byPath = Object.fromEntries(changes.files.map((file) => [file.path, file]));
      assert.deepEqual(Object.keys(byPath).sort(), ['image.bin', 'new-name.txt', 'remove-me.txt', 'src/app.js', 'untracked.txt']);
      assert.deepEqual(byPath['src/app.js'], { path: 'src/app.js', status: 'modified', additions: 2, deletions: 1, binary: false });
      assert.deepEqual(byPath['new-name.txt'], { path: 'new-name.txt', status: 'renamed', old_path: 'old-name.txt', additions: 0, deletions: 0, binary: false });
      assert.deepEqual(byPath['remove-me.txt'], { path: 'remove-me.txt', status: 'deleted', additions: 0, deletions: 1, binary: false });
      assert.deepEqual(byPath['untracked.txt'], { path: 'untracked.txt', status: 'added', additions: 2, deletions: 0, binary: false });
      assert.deepEqual(byPath['image.bin'], { path: 'image.bin', status: 'added', additions: 0, deletions: 0, binary: true });
      assert.equal(git(at, 'status', '--porcelain'), 'R  old-name.txt -> new-name.txt\nD  remove-me.txt\n?? image.bin\n?? untracked.txt', "the worktree's own index is untouched");

      const one = unwrap(await worktrees.diff(worktree, byPath['src/app.js']!, 1024 * 1024));
      assert.match(one, /^diff --git a\/src\/app\.js b\/src\/app\.js/);
      assert.match(one, /\n-line 5\n\+line five\n\+line 5\.5\n/);
      assert.doesNotMatch(one, /untracked/);
      assert.match(unwrap(await worktrees.diff(worktree, byPath['new-name.txt']!, 1024 * 1024)), /rename from old-name\.txt\nrename to new-name\.txt/);
      assert.match(unwrap(await worktrees.diff(worktree, byPath['remove-me.txt']!, 1024 * 1024)), /deleted file mode[\s\S]*-soon gone/);
      assert.match(unwrap(await worktrees.diff(worktree, byPath['untracked.txt']!, 1024 * 1024)), /new file mode[\s\S]*\+new\n\+file/);
      assert.match(unwrap(await worktrees.diff(worktree, byPath['image.bin']!, 1024 * 1024)), /Binary files \/dev\/null and b\/image\.bin differ/);
      const all = unwrap(await worktrees.diff(worktree, null, 1024 * 1024));
      for (const path of ['src/app.js', 'untracked.txt', 'image.bin', 'new-name.txt']) assert.ok(all.includes(`b/${path}`), path);
      const tooLarge = await worktrees.diff(worktree, null, 100);
      assert.equal(!tooLarge.ok && tooLarge.error.code, 'diff_too_large');

      assert.deepEqual(await worktrees.lines(worktree, byPath['src/app.js']!, 4, 6), ['line 4', 'line five', 'line 5.5']);
      assert.equal(await worktrees.lines(worktree, byPath['remove-me.txt']!, 1, 3), null);
    });

    it('merges: squash lands one commit on the base, merge a merge commit; the base checkout follows', async () => {
      const { repo, worktrees } = setup();
      const squashed = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(squashed.path, 'feature.txt', 'feature\n');
      const before = git(repo, 'rev-parse', 'main');
      const landed = unwrap(await worktrees.merge(squashed, { message: 'Add the feature', strategy: 'squash' }));
      assert.equal(landed.base, 'main');
      assert.equal(git(repo, 'rev-parse', 'main'), landed.commit);
      assert.equal(git(repo, 'log', '-1', '--format=%P %s', 'main'), `${before} Add the feature`, 'one parent: the old base');
      assert.equal(readFileSync(join(repo, 'feature.txt'), 'utf8'), 'feature\n', "the repository's checkout of main moved with it");
      assert.equal(git(repo, 'status', '--porcelain'), '', 'and is clean');
      const after = unwrap(await worktrees.changes(squashed));
      assert.deepEqual([after.files, after.ahead, after.behind, after.uncommitted], [[], 0, 0, 0], 'the branch goes on from the squashed commit');

      const merged = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(merged.path, 'other.txt', 'other\n');
      const result = unwrap(await worktrees.merge(merged, { message: 'Merge the other', strategy: 'merge' }));
      const parents = git(repo, 'log', '-1', '--format=%P', 'main').split(' ');
      assert.equal(parents.length, 2);
      assert.equal(parents[0], landed.commit);
      assert.equal(parents[1], git(merged.path, 'rev-parse', 'HEAD'));
      assert.equal(git(repo, 'rev-parse', 'main'), result.commit);
      assert.equal(readFileSync(join(repo, 'other.txt'), 'utf8'), 'other\n');
      const mergedChanges = unwrap(await worktrees.changes(merged));
      assert.deepEqual([mergedChanges.files, mergedChanges.ahead, mergedChanges.behind], [[], 0, 1], 'the branch is in the base now');

      // Merged again, with nothing to bring: the base stays as it is, no empty commit (a retry after a lost answer).
      const head = git(repo, 'rev-parse', 'main');
      for (const [worktree, strategy] of [[squashed, 'squash'], [merged, 'merge']] as const) {
        assert.deepEqual(unwrap(await worktrees.merge(worktree, { message: 'Again', strategy })), { commit: head, base: 'main' });
        assert.equal(git(repo, 'rev-parse', 'main'), head);
      }
    });

    it('refuses a conflicting merge with its files, leaving the base and its checkout as they were', async () => {
      const { repo, worktrees } = setup();
      const worktree: Worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(worktree.path, 'README.md', '# Changed by the thread\n');
      write(repo, 'README.md', '# Changed on main\n');
      git(repo, 'commit', '--quiet', '-am', 'main edits the readme');
      const before = git(repo, 'rev-parse', 'main');
      const refused = await worktrees.merge(worktree, { message: 'Conflicting', strategy: 'squash' });
      assert.equal(!refused.ok && refused.error.code, 'merge_conflict');
      assert.deepEqual(!refused.ok ? refused.error.files : null, ['README.md']);
      assert.equal(git(repo, 'rev-parse', 'main'), before);
      assert.equal(git(repo, 'status', '--porcelain'), '');
      assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# Changed on main\n');
    });

    it("records checkpoints of the whole worktree (untracked, modified, deleted; ignored left out) without touching its index, HEAD or files", async () => {
      const { repo, root, worktrees } = setup();
      const id = uuidv7();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id }));
      const at = worktree.path;
      const gitDir = git(at, 'rev-parse', '--absolute-git-dir');
      const branchHead = git(repo, 'rev-parse', worktree.branch);
      const base = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: null, messageId: null }));
      assert.ok(base !== null);
      assert.deepEqual({ ...base, commit: '', created_at: '' }, { run_id: null, message_id: null, commit: '', created_at: '', files_changed: 0 });
      assert.equal(git(repo, 'rev-parse', `${base.commit}^`), branchHead, "the first's parent is the branch");
      assert.equal(git(repo, 'rev-parse', `refs/console/checkpoints/${id}/base`), base.commit);
      assert.equal(unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: null, messageId: null })), null, 'the first is taken once');

      write(at, 'src/app.js', 'rewritten\n');
      rmSync(join(at, 'remove-me.txt'));
      write(at, 'new/untracked.txt', 'new\n');
      write(at, '.gitignore', '*.log\n');
      write(at, 'debug.log', 'ignored\n');
      write(at, 'README.md', '# Staged\n');
      git(at, 'add', 'README.md');
      const state = () => ({
        index: readFileSync(join(gitDir, 'index')).toString('base64'),
        head: readFileSync(join(gitDir, 'HEAD'), 'utf8'),
        branch: git(repo, 'rev-parse', worktree.branch),
        status: git(at, 'status', '--porcelain', '--untracked-files=all', '--ignored'),
      });
      const before = state();
      const runId = uuidv7();
      const messageId = uuidv7();
      const first = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId, messageId }));
      assert.deepEqual(state(), before, 'the index, HEAD, branch and status are as they were, byte for byte');
      assert.ok(first !== null);
      assert.equal(first.run_id, runId);
      assert.equal(first.message_id, messageId);
      assert.equal(first.files_changed, 5, 'README.md, src/app.js, remove-me.txt, new/untracked.txt, .gitignore');
      assert.equal(git(repo, 'rev-parse', `${first.commit}^`), base.commit, 'its parent is the previous checkpoint');
      assert.equal(git(repo, 'rev-parse', `refs/console/checkpoints/${id}/${runId}`), first.commit);
      const files = git(repo, 'ls-tree', '-r', '--name-only', first.commit).split('\n');
      assert.deepEqual(files.sort(), ['.gitignore', 'README.md', 'new/untracked.txt', 'old-name.txt', 'src/app.js']);
      assert.equal(git(repo, 'show', `${first.commit}:src/app.js`), 'rewritten');
      assert.equal(git(repo, 'show', `${first.commit}:README.md`), '# Staged');
      assert.equal(readFileSync(join(at, 'debug.log'), 'utf8'), 'ignored\n');

      const second = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: uuidv7(), messageId: null }));
      assert.ok(second !== null);
      assert.equal(second.files_changed, 0);
      assert.equal(git(repo, 'rev-parse', `${second.commit}^`), first.commit, "a second checkpoint's parent is the first");
      assert.deepEqual(unwrap(await worktrees.checkpoints(worktree)), [base, first, second], 'oldest first');

      // A plain directory (no worktree of the thread's) has none.
      assert.equal(unwrap(await worktrees.checkpoint({ threadId: id, path: repo, runId: uuidv7(), messageId: null })), null);
      const other = uuidv7();
      const none = await worktrees.checkpoint({ threadId: other, path: join(root, other), runId: null, messageId: null });
      assert.equal(!none.ok && none.error.code, 'worktree_tampered', 'a worktree git does not hold is refused, never made');
    });

    it('records a checkpoint of a turn in which the agent switched branches or detached HEAD', async () => {
      const { repo, worktrees } = setup();
      const id = uuidv7();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id }));
      const at = worktree.path;
      git(at, 'checkout', '-q', '-b', 'agent-feature');
      write(at, 'on-a-branch.txt', 'branched\n');
      const onBranch = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: uuidv7(), messageId: null }));
      assert.ok(onBranch !== null, 'taken on another branch');
      assert.equal(git(repo, 'show', `${onBranch.commit}:on-a-branch.txt`), 'branched');
      git(at, 'checkout', '-q', '--detach');
      write(at, 'detached.txt', 'detached\n');
      const detached = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: uuidv7(), messageId: null }));
      assert.ok(detached !== null, 'taken on a detached HEAD');
      assert.equal(git(repo, 'show', `${detached.commit}:detached.txt`), 'detached');
      assert.equal(git(repo, 'rev-parse', `${detached.commit}^`), onBranch.commit);
      assert.equal(unwrap(await worktrees.checkpoints(worktree)).length, 2);
    });

    it('restores a checkpoint: files (modified, deleted, added, committed), the branch where it was and checked out, the index; again changes nothing; ignored files stay', async () => {
      const { repo, worktrees } = setup();
      const id = uuidv7();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: id }));
      const at = worktree.path;
      write(at, '.gitignore', '*.log\n');
      write(at, 'uncommitted.txt', 'there before\n');
      const tip = git(at, 'rev-parse', 'HEAD');
      const kept = unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId: uuidv7(), messageId: null }))!;
      // What a later turn did: a file changed, one deleted, a commit, a detached HEAD, an untracked file, an ignored one.
      write(at, 'src/app.js', 'changed later\n');
      rmSync(join(at, 'remove-me.txt'));
      write(at, 'later.txt', 'committed later\n');
      git(at, 'add', '-A');
      git(at, '-c', 'user.email=a@example.com', '-c', 'user.name=A', 'commit', '-qm', 'later');
      const later = git(at, 'rev-parse', 'HEAD');
      git(at, 'checkout', '-q', '--detach');
      write(at, 'untracked.txt', 'untracked later\n');
      write(at, 'build.log', 'ignored\n');
      const runId = uuidv7();
      unwrap(await worktrees.checkpoint({ threadId: id, path: at, runId, messageId: null }));
      assert.equal(unwrap(await worktrees.restore(worktree, { commit: kept.commit, runId })), null);
      assert.equal(git(at, 'symbolic-ref', 'HEAD'), `refs/heads/console/${id}`, 'HEAD on the branch again');
      assert.equal(git(at, 'rev-parse', 'HEAD'), tip, 'the branch where it was');
      assert.equal(git(repo, 'rev-parse', `refs/console/rewound/${id}/${runId}`), later, 'the tip it left is kept');
      assert.equal(readFileSync(join(at, 'src/app.js'), 'utf8'), readFileSync(join(repo, 'src/app.js'), 'utf8'));
      assert.ok(existsSync(join(at, 'remove-me.txt')));
      assert.ok(!existsSync(join(at, 'later.txt')) && !existsSync(join(at, 'untracked.txt')));
      assert.equal(readFileSync(join(at, 'uncommitted.txt'), 'utf8'), 'there before\n');
      assert.equal(readFileSync(join(at, 'build.log'), 'utf8'), 'ignored\n', 'an ignored file is left alone');
      const status = git(at, 'status', '--porcelain');
      assert.equal(status, '?? .gitignore\n?? uncommitted.txt'.replace(/\n/g, '\n'), 'uncommitted as it was, nothing staged');
      // A second settle of the same rewind (a turn began meanwhile and wrote): what it wrote stays.
      write(at, 'written-since.txt', 'by the turn after the rewind\n');
      unwrap(await worktrees.restore(worktree, { commit: kept.commit, runId }));
      assert.equal(readFileSync(join(at, 'written-since.txt'), 'utf8'), 'by the turn after the rewind\n', 'a second restore changes nothing');
      rmSync(join(at, 'written-since.txt'));
      assert.equal(git(at, 'status', '--porcelain'), status);
      assert.equal(git(repo, 'rev-parse', `refs/console/rewound/${id}/${runId}`), later);
      const refused = await worktrees.restore(worktree, { commit: later, runId });
      assert.equal(!refused.ok && refused.error.code, 'checkpoint_unavailable', 'only a checkpoint of the thread');
    });

    it("two instances over one repository, each with a root of its own: each turn starts from the other's latest checkpoint", async () => {
      const { repo, root, worktrees: a } = setup();
      const otherRoot = mkdtempSync(join(tmpdir(), 'console-worktrees-b-'));
      made.push(otherRoot);
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo, base: 'main', threadId: id }));
      assert.equal(onA.path, join(root, id));
      write(onA.path, 'from-a.txt', 'uncommitted on A\n');
      unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }));
      // B makes its own worktree of the thread: A's files come with it, uncommitted as they were.
      const onB = unwrap(await b.ensure({ repo, base: 'main', threadId: id }));
      assert.equal(onB.path, join(otherRoot, id));
      assert.equal(readFileSync(join(onB.path, 'from-a.txt'), 'utf8'), 'uncommitted on A\n');
      assert.equal(git(onB.path, 'status', '--porcelain'), '?? from-a.txt');
      write(onB.path, 'from-b.txt', 'written on B\n');
      unwrap(await b.checkpoint({ threadId: id, path: onB.path, runId: uuidv7(), messageId: null }));
      // A's next use finds B's checkpoint the latest: its worktree is brought to it.
      unwrap(await a.ensure({ repo, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onA.path, 'from-b.txt'), 'utf8'), 'written on B\n');
      // And B, whose worktree holds the latest, keeps what it holds (an edit since is not undone).
      write(onB.path, 'from-a.txt', 'edited on B after its checkpoint\n');
      unwrap(await b.ensure({ repo, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onB.path, 'from-a.txt'), 'utf8'), 'edited on B after its checkpoint\n');
    });

    it('a repository reached by a git URL: each instance its own clone; turns push branch and checkpoint, the other starts from them; merges push the base', async () => {
      const { repo, root, worktrees: a } = setup();
      const remote = mkdtempSync(join(tmpdir(), 'console-remote-'));
      const otherRoot = mkdtempSync(join(tmpdir(), 'console-worktrees-b-'));
      made.push(remote, otherRoot);
      git(remote, 'clone', '--bare', '--quiet', repo, join(remote, 'shared.git'));
      const url = `file://${join(remote, 'shared.git')}`;
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(onA.path, join(root, id));
      assert.ok(!git(onA.path, 'rev-parse', '--git-common-dir').startsWith(repo), "the worktree is of this instance's clone");
      write(onA.path, 'from-a.txt', 'uncommitted on A\n');
      const runA = uuidv7();
      const taken = unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: runA, messageId: null }))!;
      const shared = join(remote, 'shared.git');
      assert.equal(git(shared, 'rev-parse', `refs/console/checkpoints/${id}/${runA}`), taken.commit, 'the checkpoint is pushed');
      assert.equal(git(shared, 'rev-parse', `refs/heads/console/${id}`), git(onA.path, 'rev-parse', 'HEAD'), 'the branch too');
      const onB = unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onB.path, 'from-a.txt'), 'utf8'), 'uncommitted on A\n', "B rebuilt the worktree from A's checkpoint");
      write(onB.path, 'from-b.txt', 'written on B\n');
      unwrap(await b.checkpoint({ threadId: id, path: onB.path, runId: uuidv7(), messageId: null }));
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onA.path, 'from-b.txt'), 'utf8'), 'written on B\n');
      const mergedAt = unwrap(await a.merge(onA, { message: 'Both', strategy: 'squash' }));
      assert.equal(git(shared, 'rev-parse', 'refs/heads/main'), mergedAt.commit, 'the merge is pushed');
      assert.equal(git(shared, 'show', 'main:from-b.txt'), 'written on B');
      // The remote gone: nothing runs or is read on a copy that may be stale.
      git(remote, 'init', '--quiet');
      renameSync(shared, `${shared}.away`);
      const refused = await b.ensure({ repo: url, base: 'main', threadId: id });
      assert.equal(!refused.ok && refused.error.code, 'repository_unavailable');
      renameSync(`${shared}.away`, shared);
      unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
    });

    it('a remote not reached at a turn\'s end: tried again for a while; still down, the checkpoint is kept and pushed at the next use', async () => {
      const { repo, worktrees: a } = setup();
      const { otherRoot, shared, url } = sharedRemote(repo);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      // Down for a moment: back within the tries.
      write(onA.path, 'blip.txt', 'pushed after a blip\n');
      renameSync(shared, `${shared}.away`);
      setTimeout(() => renameSync(`${shared}.away`, shared), 150);
      const blip = uuidv7();
      const taken = unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: blip, messageId: null }))!;
      assert.equal(git(shared, 'rev-parse', `refs/console/checkpoints/${id}/${blip}`), taken.commit);
      // Down for longer: kept here, told, pushed at the next use once back.
      write(onA.path, 'later.txt', 'pushed at the next use\n');
      renameSync(shared, `${shared}.away`);
      const down = uuidv7();
      const refused = await a.checkpoint({ threadId: id, path: onA.path, runId: down, messageId: null });
      assert.equal(!refused.ok && refused.error.code, 'repository_unavailable');
      assert.ok(git(onA.path, 'rev-parse', `refs/console/checkpoints/${id}/${down}`).length === 40, 'recorded here');
      renameSync(`${shared}.away`, shared);
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(git(shared, 'rev-parse', `refs/console/checkpoints/${id}/${down}`), git(onA.path, 'rev-parse', `refs/console/checkpoints/${id}/${down}`));
      const onB = unwrap(await factory(otherRoot).ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onB.path, 'later.txt'), 'utf8'), 'pushed at the next use\n', 'another instance starts from it');
    });

    // Issue 40: the loser of a push race set its checkpoint aside on its own disk, only a warning said so, and its
    // turn's files were gone from the thread: a compare-and-swap's loser rebuilds on the winner's and pushes again.
    it("two instances racing to push a turn of one thread: the loser's checkpoint is rebuilt on the winner's and pushed; both list the same", async () => {
      const { repo, worktrees: a } = setup();
      const { otherRoot, shared, url } = sharedRemote(repo);
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      const onB = unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      // The winner's turn committed on the branch; the loser's left its file uncommitted.
      write(onA.path, 'winner.txt', 'A pushed first\n');
      git(onA.path, 'add', 'winner.txt');
      git(onA.path, 'commit', '--quiet', '-m', 'winner');
      write(onB.path, 'loser.txt', 'B pushed second\n');
      // Both turns made one change alike: the rebuilt checkpoint changed one file against the winner's, not two.
      for (const path of [onA.path, onB.path]) write(path, 'alike.txt', 'the same on both\n');
      const won = unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }))!;
      const lost = uuidv7();
      const rebuilt = unwrap(await b.checkpoint({ threadId: id, path: onB.path, runId: lost, messageId: null }))!;
      assert.equal(git(shared, 'rev-parse', `refs/console/checkpoints/${id}/${lost}`), rebuilt.commit, "the loser's checkpoint reached the remote");
      assert.equal(git(shared, 'rev-parse', `refs/console/latest/${id}/checkpoint`), rebuilt.commit, 'on top: the latest');
      assert.equal(git(shared, 'rev-parse', `${rebuilt.commit}^`), won.commit, "its parent the winner's");
      assert.equal(git(shared, 'show', `${rebuilt.commit}:winner.txt`), 'A pushed first');
      assert.equal(git(shared, 'show', `${rebuilt.commit}:loser.txt`), 'B pushed second');
      assert.equal(git(shared, 'rev-parse', `refs/heads/console/${id}`), git(onA.path, 'rev-parse', 'HEAD'), "the winner's commit stays on the remote's branch");
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(git(onB.path, 'rev-parse', 'HEAD'), git(onA.path, 'rev-parse', 'HEAD'), "the loser's branch is the winner's");
      assert.equal(git(onB.path, 'status', '--porcelain'), '?? alike.txt\n?? loser.txt', 'its own files uncommitted as they were');
      for (const path of [onA.path, onB.path]) {
        assert.equal(readFileSync(join(path, 'winner.txt'), 'utf8'), 'A pushed first\n');
        assert.equal(readFileSync(join(path, 'loser.txt'), 'utf8'), 'B pushed second\n');
      }
      const listedOnA = unwrap(await a.checkpoints(onA)).map((c) => c.commit);
      assert.deepEqual(listedOnA, [won.commit, rebuilt.commit]);
      assert.deepEqual(unwrap(await a.checkpoints(onA)).map((c) => c.files_changed), [1, 1], "the rebuilt one counts against the winner's (loser.txt alone), not its first parent (alike.txt too)");
      assert.deepEqual(unwrap(await b.checkpoints(onB)).map((c) => c.commit), listedOnA);
    });

    it("two instances racing to push, their turns changing one file differently: the loser's checkpoint is set aside and told, never dropped; it rebuilds from the winner's", async () => {
      const { repo, worktrees: a } = setup();
      const { otherRoot, shared, url } = sharedRemote(repo);
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      const onB = unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      write(onA.path, 'both.txt', 'A pushed first\n');
      write(onB.path, 'both.txt', 'B pushed second\n');
      const won = unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }))!;
      const lost = uuidv7();
      const refused = await b.checkpoint({ threadId: id, path: onB.path, runId: lost, messageId: null });
      assert.equal(!refused.ok && refused.error.code, 'checkpoint_set_aside');
      assert.ok(!refused.ok && refused.error.detail?.includes(`refs/console/rejected/${id}/${lost}`), 'the detail names where it is kept');
      assert.equal(git(shared, 'rev-parse', `refs/heads/console/${id}`), git(onA.path, 'rev-parse', 'HEAD'), "the remote holds the winner's branch");
      const aside = git(onB.path, 'rev-parse', `refs/console/rejected/${id}/${lost}`);
      assert.equal(git(onB.path, 'show', `${aside}:both.txt`), 'B pushed second', "the loser's checkpoint is kept aside");
      unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onB.path, 'both.txt'), 'utf8'), 'A pushed first\n', "the loser rebuilt from the winner's checkpoint");
      assert.deepEqual(unwrap(await b.checkpoints(onB)).map((c) => c.commit), [won.commit]);
    });

    /**
     * One thread on two instances over a shared remote: A writes `fileA` and takes a checkpoint while the remote is away
     * (refused: owed), then, the remote back, B writes `fileB` and its checkpoint reaches the remote first.
     */
    const owedThenOvertaken = async (fileA: string, fileB: string) => {
      const { repo, worktrees: a } = setup();
      const { otherRoot, shared, url } = sharedRemote(repo);
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      const onB = unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      write(onA.path, fileA, 'taken on A while the remote was down\n');
      renameSync(shared, `${shared}.away`);
      const owed = uuidv7();
      const refused = await a.checkpoint({ threadId: id, path: onA.path, runId: owed, messageId: null });
      assert.equal(!refused.ok && refused.error.code, 'repository_unavailable');
      renameSync(`${shared}.away`, shared);
      write(onB.path, fileB, 'B went on\n');
      const onRemote = unwrap(await b.checkpoint({ threadId: id, path: onB.path, runId: uuidv7(), messageId: null }))!;
      return { shared, url, a, b, id, onA, onB, owed, onRemote };
    };

    // Issue 40: a checkpoint owed to a remote that was not reached, refused at the next use (another instance went on
    // meanwhile), was forgotten: its files went from the instance, and the two instances listed different checkpoints.
    it('a checkpoint owed to a remote not reached, refused at the next use because another instance went on: rebuilt on top and pushed, never dropped; both list the same', async () => {
      const { shared, url, a, b, id, onA, onB, owed, onRemote } = await owedThenOvertaken('owed.txt', 'meanwhile.txt');
      // A's next use: its owed checkpoint is refused by the remote, rebuilt on B's and pushed.
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      const pushed = git(shared, 'rev-parse', `refs/console/checkpoints/${id}/${owed}`);
      assert.equal(git(shared, 'rev-parse', `refs/console/latest/${id}/checkpoint`), pushed);
      assert.equal(git(shared, 'rev-parse', `${pushed}^`), onRemote.commit);
      assert.equal(readFileSync(join(onA.path, 'owed.txt'), 'utf8'), 'taken on A while the remote was down\n', 'its files stay on A');
      assert.equal(readFileSync(join(onA.path, 'meanwhile.txt'), 'utf8'), 'B went on\n');
      unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onB.path, 'owed.txt'), 'utf8'), 'taken on A while the remote was down\n', 'and reach B');
      const listedOnA = unwrap(await a.checkpoints(onA)).map((c) => c.commit);
      assert.deepEqual(listedOnA, [onRemote.commit, pushed]);
      assert.deepEqual(unwrap(await b.checkpoints(onB)).map((c) => c.commit), listedOnA);
    });

    it('an owed checkpoint refused at the next use, changing a file the other instance changed differently: set aside and answered checkpoint_set_aside once, never dropped', async () => {
      const { url, a, b, id, onA, onB, owed, onRemote } = await owedThenOvertaken('both.txt', 'both.txt');
      const told = await a.ensure({ repo: url, base: 'main', threadId: id });
      assert.equal(!told.ok && told.error.code, 'checkpoint_set_aside');
      const aside = git(onA.path, 'rev-parse', `refs/console/rejected/${id}/${owed}`);
      assert.equal(git(onA.path, 'show', `${aside}:both.txt`), 'taken on A while the remote was down', 'kept aside on A');
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(readFileSync(join(onA.path, 'both.txt'), 'utf8'), 'B went on\n', "A goes on from B's");
      assert.deepEqual(unwrap(await a.checkpoints(onA)).map((c) => c.commit), [onRemote.commit]);
      assert.deepEqual(unwrap(await b.checkpoints(onB)).map((c) => c.commit), [onRemote.commit]);
    });

    // Issue 40: a push of the base that could not reach the remote was told apart from nothing and answered 409
    // `base_moved` ("ask again": the base had not moved); it is the remote's absence, 503 as every other use of it.
    it('a merge whose push of the base cannot reach the remote is repository_unavailable, not base_moved; nothing of the base moves', async () => {
      const { repo, worktrees: a } = setup();
      const remote = mkdtempSync(join(tmpdir(), 'console-remote-'));
      made.push(remote);
      const shared = join(remote, 'shared.git');
      git(remote, 'clone', '--bare', '--quiet', repo, shared);
      const url = `file://${shared}`;
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      write(onA.path, 'feature.txt', 'feature\n');
      const before = { shared: git(shared, 'rev-parse', 'main'), local: git(onA.path, 'rev-parse', 'main') };
      renameSync(shared, `${shared}.away`);
      const refused = await a.merge(onA, { message: 'Feature', strategy: 'squash' });
      assert.equal(!refused.ok && refused.error.code, 'repository_unavailable', JSON.stringify(refused));
      assert.equal(git(onA.path, 'rev-parse', 'main'), before.local, "this instance's base did not move");
      renameSync(`${shared}.away`, shared);
      assert.equal(git(shared, 'rev-parse', 'main'), before.shared, "nor the remote's");
      // Back: the same merge lands.
      const landed = unwrap(await a.merge(onA, { message: 'Feature', strategy: 'squash' }));
      assert.equal(git(shared, 'rev-parse', 'main'), landed.commit);
      assert.equal(git(shared, 'show', 'main:feature.txt'), 'feature');
    });

    // Issue 40: after a merge through one instance, the other's existing worktree of the thread still listed the
    // merged files as changed: its thread branch was never moved to the remote's, only its base.
    for (const strategy of ['squash', 'merge'] as const) {
      it(`a ${strategy} through one instance: the other's existing worktree lists nothing merged as changed, and keeps what it holds beyond; a new disk's the same`, async () => {
        const { repo, worktrees: a } = setup();
        const { otherRoot, shared, url } = sharedRemote(repo);
        const elsewhere = mkdtempSync(join(tmpdir(), 'console-elsewhere-'));
        made.push(elsewhere);
        const b = factory(otherRoot);
        const id = uuidv7();
        const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
        write(onA.path, 'feature.txt', 'feature\n');
        unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }));
        const onB = unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
        assert.deepEqual(unwrap(await b.changes(onB)).files.map((file) => file.path), ['feature.txt']);
        // The base moves meanwhile (someone else's push): the merge brings it in too.
        git(elsewhere, 'clone', '--quiet', url, 'work');
        write(join(elsewhere, 'work'), 'other.txt', 'pushed by someone else\n');
        git(join(elsewhere, 'work'), 'add', 'other.txt');
        git(join(elsewhere, 'work'), '-c', 'user.email=o@example.com', '-c', 'user.name=O', 'commit', '--quiet', '-m', 'other');
        git(join(elsewhere, 'work'), 'push', '--quiet', 'origin', 'main');
        unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
        unwrap(await a.merge(onA, { message: 'Feature', strategy }));
        assert.deepEqual(unwrap(await a.changes(onA)).files, [], 'nothing left to merge on A');
        // B holds one more file of its own, not merged (written since its last checkpoint): kept.
        write(onB.path, 'kept-on-b.txt', 'not merged\n');
        unwrap(await b.ensure({ repo: url, base: 'main', threadId: id }));
        assert.deepEqual(unwrap(await b.changes(onB)).files.map((file) => file.path), ['kept-on-b.txt'], 'only what B holds beyond the merge');
        assert.equal(readFileSync(join(onB.path, 'kept-on-b.txt'), 'utf8'), 'not merged\n');
        assert.equal(readFileSync(join(onB.path, 'feature.txt'), 'utf8'), 'feature\n');
        // A squash's branch holds the base's own change too; a merge's is the commit of what the worktree held.
        assert.equal(existsSync(join(onB.path, 'other.txt')), strategy === 'squash', "B's files are the branch's");
        assert.equal(existsSync(join(onA.path, 'other.txt')), strategy === 'squash', "as A's are");
        assert.equal(git(onB.path, 'rev-parse', 'HEAD'), git(shared, 'rev-parse', `refs/heads/console/${id}`), "B's branch is the remote's");
        // An instance with a new disk rebuilds the worktree from the latest checkpoint: nothing merged listed either,
        // and nothing of the base's own change taken back (its files before were the checkpoint's, on the merged branch).
        const thirdRoot = mkdtempSync(join(tmpdir(), 'console-worktrees-c-'));
        made.push(thirdRoot);
        const c = factory(thirdRoot);
        const onC = unwrap(await c.ensure({ repo: url, base: 'main', threadId: id }));
        assert.deepEqual(unwrap(await c.changes(onC)).files, []);
        assert.equal(readFileSync(join(onC.path, 'feature.txt'), 'utf8'), 'feature\n');
        assert.equal(existsSync(join(onC.path, 'other.txt')), strategy === 'squash');
        assert.equal(git(onC.path, 'rev-parse', 'HEAD'), git(shared, 'rev-parse', `refs/heads/console/${id}`), "C's branch is the remote's");
      });
    }

    it('a squash whose push of the branch did not reach the remote: the merging instance keeps its squashed branch, never the remote\'s older one', async () => {
      const { repo, worktrees: a } = setup();
      const remote = mkdtempSync(join(tmpdir(), 'console-remote-'));
      made.push(remote);
      const shared = join(remote, 'shared.git');
      git(remote, 'clone', '--bare', '--quiet', repo, shared);
      const url = `file://${shared}`;
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      // The agent committed on the branch: the squashed commit does not descend from it.
      write(onA.path, 'feature.txt', 'feature\n');
      git(onA.path, 'add', 'feature.txt');
      git(onA.path, 'commit', '--quiet', '-m', 'feature');
      write(onA.path, 'more.txt', 'more\n');
      unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }));
      const before = git(shared, 'rev-parse', `refs/heads/console/${id}`);
      assert.equal(before, git(onA.path, 'rev-parse', 'HEAD'));
      unwrap(await a.merge(onA, { message: 'Feature', strategy: 'squash' }));
      // As if the branch's push (after the base's) had not reached the remote: it and this clone's record of it as before.
      git(shared, 'update-ref', `refs/heads/console/${id}`, before);
      git(onA.path, 'update-ref', `refs/remotes/origin/console/${id}`, before);
      const squashed = git(onA.path, 'rev-parse', 'HEAD');
      unwrap(await a.ensure({ repo: url, base: 'main', threadId: id }));
      assert.equal(git(onA.path, 'rev-parse', 'HEAD'), squashed);
      assert.deepEqual(unwrap(await a.changes(onA)).files, []);
    });

    it("a rewind on one instance is the thread's latest state on the other: its restore is recorded as a checkpoint, not listed", async () => {
      const { repo, worktrees: a } = setup();
      const otherRoot = mkdtempSync(join(tmpdir(), 'console-worktrees-b-'));
      made.push(otherRoot);
      const b = factory(otherRoot);
      const id = uuidv7();
      const onA = unwrap(await a.ensure({ repo, base: 'main', threadId: id }));
      const kept = unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: uuidv7(), messageId: null }))!;
      write(onA.path, 'rewound.txt', 'taken back\n');
      const later = uuidv7();
      unwrap(await a.checkpoint({ threadId: id, path: onA.path, runId: later, messageId: null }));
      const onB = unwrap(await b.ensure({ repo, base: 'main', threadId: id }));
      assert.ok(existsSync(join(onB.path, 'rewound.txt')));
      unwrap(await a.restore(onA, { commit: kept.commit, runId: later }));
      assert.deepEqual(unwrap(await a.checkpoints(onA)).map((c) => c.run_id).at(-1), later, 'the record of the restore is not listed');
      unwrap(await b.ensure({ repo, base: 'main', threadId: id }));
      assert.ok(!existsSync(join(onB.path, 'rewound.txt')), 'B holds the state the rewind put back');
      unwrap(await a.ensure({ repo, base: 'main', threadId: id }));
      assert.ok(!existsSync(join(onA.path, 'rewound.txt')), 'and A keeps it');
    });

    it('refuses to merge into a checkout of the base with uncommitted changes', async () => {
      const { repo, worktrees } = setup();
      const worktree = unwrap(await worktrees.ensure({ repo, base: 'main', threadId: uuidv7() }));
      write(worktree.path, 'feature.txt', 'feature\n');
      write(repo, 'README.md', '# Someone is editing\n');
      const before = git(repo, 'rev-parse', 'main');
      const refused = await worktrees.merge(worktree, { message: 'Feature', strategy: 'squash' });
      assert.equal(!refused.ok && refused.error.code, 'base_checkout_dirty');
      assert.equal(git(repo, 'rev-parse', 'main'), before);
      assert.equal(readFileSync(join(repo, 'README.md'), 'utf8'), '# Someone is editing\n');
    });
  });
}
