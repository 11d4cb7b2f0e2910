// Issue 35 (item 3): agents run sandboxed, each in its own thread's worktree. Through the whole service
// with the bundled demo agent: two threads of a repository project each get a file written by their agent
// inside the sandbox, each thread's changes are its own, and the service's own git (changes, a squash
// merge) works on what the sandboxed agents left. Skipped, saying why, where no sandbox can be made.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { probeSandbox } from '../../adapters/acp/sandbox-probe.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { agentSandbox } from '../../src/system/agent-sandbox.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { git, gitRepository } from '../support/git-repo.ts';
import { startService, type TestService } from '../support/service.ts';
import { builtDemoAgent } from '../support/built.ts';

const ALICE: Record<string, string> = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const probe = await probeSandbox(process.env.PATH ?? '/usr/bin:/bin');

describe('threads of a repository project, their agents sandboxed', { skip: probe.ok ? false : `no sandbox here: ${!probe.ok && probe.reason}`, timeout: 120_000 }, () => {
  let service: TestService;
  let repo: string;
  let dataDir: string;
  before(async () => {
    repo = gitRepository();
    dataDir = mkdtempSync(join(tmpdir(), 'sandboxed-worktrees-'));
    const storage = createMemoryStorage();
    const fixture = fixtureWorld();
    await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo, base: 'main' }] });
    // As the composition root builds it (the test's own HOME and TMPDIR are left visible: the repository is in TMPDIR).
    const { sandbox } = agentSandbox({ dataDir, world: null }, {}, probe);
    assert.ok(sandbox !== null);
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), env: process.env, sandbox });
    service = await startService({ DATA_DIR: dataDir, DIRECTIVES_PER_MINUTE: '100000' }, { storage, runner, offers: runner.offers });
  });
  after(async () => {
    await service?.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  const get = (path: string) => service.ask({ path: `${P}/${path}`, headers: ALICE });
  const post = (path: string, body: unknown) => service.ask({ method: 'POST', path: `${P}/${path}`, headers: ALICE, body: JSON.stringify(body) });
  async function until<T>(read: () => Promise<T | null>, what: string): Promise<T> {
    for (const end = Date.now() + 30_000; ; await sleep(50)) {
      const found = await read();
      if (found !== null) return found;
      if (Date.now() > end) assert.fail(`not ${what} within 30 s`);
    }
  }

  /** A thread on the repository project whose agent asked to write notes.md, was allowed, and ended its turn. */
  async function threadWithNotes(): Promise<{ id: string; path: string }> {
    const sent = await post(`${randomUUID()}/directives`, { text: '[approval] write the notes', project: 'repo-web', model: 'claude:opus' });
    assert.equal(sent.status, 202, sent.text);
    const id = (sent.json() as { thread_id: string }).thread_id;
    const pending = await until(async () => ((await get(`${id}/pending`)).json() as { id: string }[])[0] ?? null, 'asked');
    assert.equal((await post(`${id}/responses`, { responses: [{ id: pending.id, option: 'allow' }] })).status, 202);
    await until(async () => (((await get(`${id}/conversations`)).json() as { turn_running: boolean }[]).some((c) => c.turn_running) ? null : true), 'ended');
    const row = (await get(id)).json() as { worktree: { path: string } };
    return { id, path: row.worktree.path };
  }

  it("writes in each thread's own worktree, and the service reads and merges what it left", async () => {
    const a = await threadWithNotes();
    const b = await threadWithNotes();
    for (const t of [a, b]) {
      assert.match(readFileSync(join(t.path, 'notes.md'), 'utf8'), /write the notes/);
      assert.deepEqual(((await get(`${t.id}/changes`)).json() as { files: { path: string }[] }).files.map((f) => f.path), ['notes.md']);
    }
    // Each worktree's agent is a bwrap of its own, which binds that worktree and not the other (bwrap
    // forks the namespace's first process with its own argv: one sandbox shows as two processes).
    const found = readdirSync('/proc').filter((pid) => /^\d+$/.test(pid)).flatMap((pid) => {
      // A process may end between the listing and the read (other test files run at once): it is no sandbox of ours.
      let argv: string[];
      try {
        argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
      } catch {
        return [];
      }
      return argv[0] === (probe as { bwrap: string }).bwrap && argv.includes('--chdir') ? [argv] : [];
    }).filter((argv) => argv.includes(a.path) || argv.includes(b.path));
    const sandboxes = [...new Set(found.map((argv) => argv.join('\0')))].map((argv) => argv.split('\0'));
    assert.equal(sandboxes.length, 2, 'one sandboxed process per worktree');
    assert.ok(sandboxes.every((argv) => !(argv.includes(a.path) && argv.includes(b.path))));
    const merged = await post(`${a.id}/changes/merge`, { strategy: 'squash', message: 'Add the notes' });
    assert.equal(merged.status, 200, merged.text);
    assert.match(git(repo, 'show', 'main:notes.md'), /write the notes/);
  });
});
