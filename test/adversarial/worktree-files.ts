// The adversarial run's worktree probe (docs/operations.md, "Tried as an attacker would"): an agent that may
// only write files in its worktree writes what the security probe of issue 35 wrote, one thing at a time (a
// planted git directory naming a command for every hook git has into a file's life, `.git` made a link out,
// an empty directory, a file naming another thread's admin directory, `.GIT/config`, a `.gitmodules` with
// `update = !command`, a nested repository with its own fsmonitor, links out of the worktree, a FIFO, names
// that look like options), and after each every changes route is read by the thread's owner.
// Nothing may run a planted command, answer 500, hang, or show a file from outside the worktree. Bounded: a
// fixed list of writes, each followed by the same requests.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository, write } from '../support/git-repo.ts';
import { plantGitDirectory, ran } from '../support/hostile-worktree.ts';
import { startService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
/** A line of /etc/passwd every Linux has: no answer may carry it. */
const OUTSIDE = 'root:x:0:0:';

/** Runs the probe; answers how many requests it made after how many hostile writes. */
export async function worktreeFiles(): Promise<{ writes: number; requests: number }> {
  const repo = gitRepository();
  const markers = mkdtempSync(join(tmpdir(), 'console-adversarial-markers-'));
  const storage = createMemoryStorage();
  const fixture = fixtureWorld();
  await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
  const service = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage });
  let requests = 0;
  const ask = async (method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const res = await service.ask({ method, path: `${P}/${path}`, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
    requests += 1;
    return res;
  };
  const idle = async (id: string) => {
    for (let i = 0; i < 600; i += 1) {
      const conversations = (await ask('GET', `${id}/conversations`, ALICE)).json() as { turn_running: boolean }[];
      if (!conversations.some((c) => c.turn_running)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`the turn on ${id} did not end`);
  };
  /** A new thread of alice's, its first turn over: its worktree made. */
  const thread = async () => {
    const res = await ask('POST', `${randomUUID()}/directives`, ALICE, { text: 'Start', project: 'repo-web', model: 'claude:opus' });
    assert.equal(res.status, 202, res.text);
    const { thread_id: id } = res.json() as { thread_id: string };
    await idle(id);
    const row = (await ask('GET', id, ALICE)).json() as { worktree: { path: string } };
    return { id, path: row.worktree.path };
  };
  try {
    const target = await thread();
    const other = await thread();
    const admin = (path: string) => git(path, 'rev-parse', '--path-format=absolute', '--git-dir');
    const otherAdmin = admin(other.path);
    const writes: readonly [string, (path: string) => void][] = [
      ['a planted git directory', (path) => plantGitDirectory(path, markers)],
      ['.git a link out', (path) => { rmSync(join(path, '.git'), { recursive: true, force: true }); symlinkSync('/etc/passwd', join(path, '.git')); }],
      ['.git an empty directory', (path) => { rmSync(join(path, '.git'), { recursive: true, force: true }); mkdirSync(join(path, '.git')); }],
      ["a .git naming another thread's admin directory", (path) => writeFileSync(join(path, '.git'), `gitdir: ${otherAdmin}\n`)],
      ['.GIT/config', (path) => write(path, '.GIT/config', `[core]\n\tfsmonitor = "touch '${markers}/GIT'"\n`)],
      ['a .gitmodules with update = !command', (path) => write(path, '.gitmodules', `[submodule "s"]\n\tpath = s\n\turl = ext::sh -c touch% ${markers}/url\n\tupdate = !touch ${markers}/update\n`)],
      ['a nested repository with its own fsmonitor', (path) => {
        const sub = join(path, 's');
        mkdirSync(sub, { recursive: true });
        git(sub, 'init', '--quiet');
        writeFileSync(join(sub, '.git', 'config'), `[core]\n\tfsmonitor = "touch '${markers}/nested'"\n`);
      }],
      ['links out of the worktree', (path) => { symlinkSync('/etc/passwd', join(path, 'passwd')); symlinkSync('/etc', join(path, 'etc')); }],
      ['a FIFO', (path) => execFileSync('mkfifo', [join(path, 'pipe')])],
      ['names that look like options', (path) => { for (const name of ['-rf', `--output=${markers}/output`, 'tab\there', ' lead']) write(path, name, 'x\n'); }],
    ];
    const reads = ['changes', 'changes/diff', 'changes/diff?path=passwd', 'changes/diff?path=-rf', `changes/diff?path=${encodeURIComponent('--output=x')}`];
    for (const [what, hostile] of writes) {
      hostile(target.path);
      for (const read of reads) {
        const res = await ask('GET', `${target.id}/${read}`, ALICE);
        const where = `after ${what}: GET ${read} -> ${res.status} ${res.text.slice(0, 300)}`;
        assert.ok(res.status < 500, where);
        assert.ok(!res.text.includes(OUTSIDE), `${where}: shows a file from outside the worktree`);
        assert.deepEqual(ran(markers), [], `${where}: ran a planted command`);
      }
    }
    const review = await ask('POST', `${target.id}/changes/review`, ALICE, { comments: [{ path: 'passwd', line: 1, text: 'What is this?' }] });
    assert.ok(review.status < 500, `review -> ${review.status} ${review.text}`);
    await idle(target.id);
    const merged = await ask('POST', `${target.id}/changes/merge`, ALICE, { strategy: 'squash', message: 'Hostile' });
    assert.ok(merged.status < 500, `merge -> ${merged.status} ${merged.text}`);
    assert.deepEqual(ran(markers), [], 'the review and the merge ran no planted command');
    assert.equal(git(repo, 'status', '--porcelain'), '', "the base checkout is the operator's, untouched");
    return { writes: writes.length, requests };
  } finally {
    await service.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(markers, { recursive: true, force: true });
  }
}
