// What the sandbox makes writable for a worktree is what the repository says, not what the worktree's `.git`
// file claims: an agent writes that file, so a `.git` naming another directory (as an admin directory of its
// own making, with its own `gitdir` and `commondir`) gets nothing of it bound writable. No bwrap needed: the
// argv is read, not run.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { sandboxedSpawn } from '../../adapters/acp/sandbox.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'console-sandbox-mounts-')));
after(() => rmSync(root, { recursive: true, force: true }));
const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-C', cwd, ...args], { env: { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@t', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@t' } });
const sandbox = { bwrap: '/usr/bin/bwrap', hide: [], show: [], homes: join(root, 'homes') };
const writable = (argv: readonly string[]) => argv.flatMap((arg, i) => (arg === '--bind' ? [argv[i + 1]!] : []));
/** What is bound read-only after the last writable bind (on top of it). */
const readOnlyOnTop = (argv: readonly string[]) => argv.slice(argv.lastIndexOf('--bind')).flatMap((arg, i, rest) => (arg === '--ro-bind' ? [rest[i + 1]!] : []));
const spawnIn = (cwd: string) => sandboxedSpawn(sandbox, { agentId: 'a', argv: ['sh'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, literals: {}, cwd, network: false });

describe('sandbox mounts of a worktree', () => {
  const repo = join(root, 'repo');
  const tree = join(root, 'tree');
  mkdirSync(repo);
  git(repo, 'init', '--quiet', '--initial-branch=main');
  writeFileSync(join(repo, 'a.txt'), 'a\n');
  git(repo, 'add', '--all');
  git(repo, 'commit', '--quiet', '-m', 'first');
  git(repo, 'worktree', 'add', '--quiet', '-b', 'console/t', tree, 'main');

  it("binds the worktree's admin directory, the objects and its branch's ref directory writable", async () => {
    const binds = writable((await spawnIn(tree)).argv);
    for (const dir of [tree, join(repo, '.git', 'worktrees', 'tree'), join(repo, '.git', 'objects'), join(repo, '.git', 'refs', 'heads', 'console')]) {
      assert.ok(binds.includes(dir), `${dir} in ${binds.join(' ')}`);
    }
  });

  it("keeps the admin directory's logs and config.worktree read-only, removes the reflogs and makes none (the service's git writes there later)", async () => {
    const admin = join(repo, '.git', 'worktrees', 'tree');
    const { argv, env } = await spawnIn(tree);
    const onTop = readOnlyOnTop(argv);
    for (const path of [join(admin, 'logs'), join(admin, 'config.worktree'), join(tree, '.git'), join(admin, 'gitdir'), join(admin, 'commondir')]) {
      assert.ok(onTop.includes(path), `${path} read-only on top of the writable binds: ${onTop.join(' ')}`);
    }
    assert.ok(!existsSync(join(admin, 'logs', 'HEAD')) && !existsSync(join(repo, '.git', 'logs', 'refs', 'heads', 'console', 't')), 'the reflogs are gone');
    const count = Number(env.GIT_CONFIG_COUNT);
    const keys = Array.from({ length: count }, (_, i) => `${env[`GIT_CONFIG_KEY_${i}`]}=${env[`GIT_CONFIG_VALUE_${i}`]}`);
    assert.ok(keys.includes('core.logAllRefUpdates=false'), keys.join(' '));
  });

  it('a HEAD the agent pointed at main makes no branch writable (only a thread\'s console/ branch ever is)', async () => {
    const head = join(repo, '.git', 'worktrees', 'tree', 'HEAD');
    writeFileSync(head, 'ref: refs/heads/main\n');
    try {
      const binds = writable((await spawnIn(tree)).argv);
      assert.ok(!binds.some((dir) => dir.startsWith(join(repo, '.git', 'refs'))), binds.join(' '));
    } finally {
      writeFileSync(head, 'ref: refs/heads/console/t\n');
    }
  });

  it("a .git the agent pointed at another directory (another thread's admin directory, a data directory) gets nothing of it writable", async () => {
    const other = join(root, 'other');
    git(repo, 'worktree', 'add', '--quiet', '-b', 'console/o', other, 'main');
    const secret = join(root, 'data', 'secrets');
    mkdirSync(join(secret, 'objects'), { recursive: true });
    writeFileSync(join(secret, 'commondir'), '..\n');
    for (const target of [join(repo, '.git', 'worktrees', 'other'), secret]) {
      writeFileSync(join(tree, '.git'), `gitdir: ${target}\n`);
      const binds = writable((await spawnIn(tree)).argv);
      assert.deepEqual(binds.filter((dir) => dir !== tree && !dir.startsWith(join(root, 'homes'))), [], `${target}: ${binds.join(' ')}`);
      assert.ok(binds.includes(tree), 'its own directory stays writable');
    }
  });
});
