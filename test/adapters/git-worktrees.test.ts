import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { uuidv7 } from 'uuidv7';
import { gitWorktrees } from '../../adapters/git/worktrees.ts';
import { worktreesContract } from '../contracts/worktrees.contract.ts';
import { gitRepository } from '../support/git-repo.ts';

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
