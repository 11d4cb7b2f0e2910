// Issue 40 (first slice): two instances on one storage, each with a DATA_DIR of its own, on a repository project
// whose repository both reach. A thread's worktree is each instance's own (never the path the first recorded):
// a turn through either runs in a directory of its own disk, and starts from the thread's latest checkpoint,
// whichever instance took it; changes read the same through both, and a merge through either lands everything.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { fixtureWorld } from './support/fixture-world.ts';
import { git, gitRepository, write } from './support/git-repo.ts';
import { idleThread } from './support/http.ts';
import { startService, type TestService } from './support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';

for (const form of ['a path both instances reach', 'a file:// URL (each instance its own clone)'] as const) describe(`two instances, two disks, one repository project at ${form}`, () => {
  let a: TestService;
  let b: TestService;
  let repo: string;
  /** The repository the project names, and the one that holds its branches: the same, or the remote of the clones. */
  let shared: string;
  before(async () => {
    repo = gitRepository();
    shared = repo;
    if (form !== 'a path both instances reach') {
      shared = `${repo}-remote.git`;
      git(repo, 'clone', '--bare', '--quiet', repo, shared);
    }
    const storage = createMemoryStorage();
    const fixture = fixtureWorld();
    const named = shared === repo ? repo : `file://${shared}`;
    await storage.importWorld({ ...fixture, projects: [...fixture.projects, { name: 'repo-web', directory: null, repo: named, base: 'main' }] });
    const bus = createMemoryEventBus();
    a = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage, bus });
    b = await startService({ DIRECTIVES_PER_MINUTE: '100000' }, { storage, bus });
  });
  after(async () => {
    await a?.close();
    await b?.close();
    rmSync(repo, { recursive: true, force: true });
    rmSync(`${repo}-remote.git`, { recursive: true, force: true });
  });

  const idle = (service: TestService, threadId: string) => idleThread(service.port, threadId, ALICE);
  const turn = async (service: TestService, ref: string, body: Record<string, unknown>) => {
    const res = await service.ask({ method: 'POST', path: `${P}/${ref}/directives`, headers: ALICE, body: JSON.stringify(body) });
    assert.equal(res.status, 202, res.text);
    const answer = res.json() as { thread_id: string; run_id: string; conversation_id: string };
    await idle(service, answer.thread_id);
    return answer;
  };
  const changed = async (service: TestService, threadId: string) => {
    const res = await service.ask({ path: `${P}/${threadId}/changes`, headers: ALICE });
    assert.equal(res.status, 200, res.text);
    return (res.json() as { files: { path: string }[] }).files.map((f) => f.path).sort();
  };

  it('runs each turn on its own disk from the latest checkpoint, reads the same changes through both, and merges everything', async () => {
    const first = await turn(a, randomUUID(), { text: 'Start', model: 'claude:opus', project: 'repo-web' });
    const id = first.thread_id;
    const onA = join(a.config.dataDir, 'worktrees', id);
    const onB = join(b.config.dataDir, 'worktrees', id);
    write(onA, 'from-a.txt', 'written on A\n');
    await turn(a, id, { text: 'Second on A' });
    // Through B: its own worktree, with what A's turns left (uncommitted there), and the same changes.
    assert.deepEqual(await changed(b, id), ['from-a.txt']);
    assert.ok(existsSync(join(onB, 'from-a.txt')), "B's worktree holds A's latest checkpoint");
    const third = await turn(b, id, { text: 'Third on B' });
    write(onB, 'from-b.txt', 'written on B\n');
    await turn(b, id, { text: 'Fourth on B' });
    const runs = (await b.ask({ path: `${P}/${id}/conversations/${third.conversation_id}/runs?limit=10`, headers: ALICE })).json().items as { id: string; directory: string }[];
    assert.equal(runs.find((run) => run.id === third.run_id)?.directory, onB, "B's turn ran on B's disk, not where A recorded the worktree");
    // A fork made through B, at A's second message: its worktree on B from the checkpoint after that message's run.
    const lines = (await b.ask({ path: `${P}/${id}/messages?limit=50`, headers: ALICE })).json().items as { id: string; role: string; text: string }[];
    const atSecond = lines.find((m) => m.role === 'user' && m.text === 'Second on A')!.id;
    const forked = await b.ask({ method: 'POST', path: `${P}/${id}/fork`, headers: ALICE, body: JSON.stringify({ message_id: atSecond, text: 'Fork on B' }) });
    assert.equal(forked.status, 201, forked.text);
    const forkId = (forked.json() as { thread_id: string }).thread_id;
    await idle(b, forkId);
    const forkOnB = join(b.config.dataDir, 'worktrees', forkId);
    assert.ok(existsSync(join(forkOnB, 'from-a.txt')), "the fork starts from A's checkpoint");
    assert.ok(!existsSync(join(forkOnB, 'from-b.txt')), 'not from what came after the message');
    // Back through A: B's latest checkpoint first.
    assert.deepEqual(await changed(a, id), ['from-a.txt', 'from-b.txt']);
    assert.ok(existsSync(join(onA, 'from-b.txt')));
    const merged = await a.ask({ method: 'POST', path: `${P}/${id}/changes/merge`, headers: ALICE, body: JSON.stringify({ strategy: 'squash' }) });
    assert.equal(merged.status, 200, merged.text);
    assert.equal(git(shared, 'show', 'main:from-a.txt'), 'written on A');
    assert.equal(git(shared, 'show', 'main:from-b.txt'), 'written on B');
    // Merged through A, nothing is left to merge through either: B's worktree follows the thread's branch as merged
    // (before, B's branch stayed where it was on a clone, and B listed every merged file as changed).
    assert.deepEqual(await changed(a, id), []);
    assert.deepEqual(await changed(b, id), []);
  });

  // Issue 40: a queued turn ran in the directory the instance that queued it had worked out. Queued through B and
  // started by A (where the turn before it ended), it ran in B's worktree, a path A never made (another machine's
  // disk), and A took no checkpoint of it.
  it("a turn queued through one instance and started by the other runs in the starter's own worktree, and is checkpointed", async () => {
    const first = await turn(a, randomUUID(), { text: 'Start', model: 'claude:opus', project: 'repo-web' });
    const id = first.thread_id;
    const onA = join(a.config.dataDir, 'worktrees', id);
    const held = await a.ask({ method: 'POST', path: `${P}/${id}/directives`, headers: ALICE, body: JSON.stringify({ text: 'hold [wait]' }) });
    assert.equal(held.status, 202, held.text);
    const queued = await b.ask({ method: 'POST', path: `${P}/${id}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Queued through B', when_busy: 'queue' }) });
    assert.equal(queued.status, 202, queued.text);
    write(onA, 'before-the-queued-turn.txt', 'written on A while it waited\n');
    const cancelled = await a.ask({ method: 'POST', path: `${P}/${id}/cancel`, headers: ALICE });
    assert.equal(cancelled.status, 202, cancelled.text);
    await idle(a, id);
    const runs = (await a.ask({ path: `${P}/${id}/conversations/${first.conversation_id}/runs?limit=10`, headers: ALICE })).json().items as { id: string; status: string }[];
    const last = runs.map((run) => run.id).sort().at(-1)!;
    assert.equal(runs.length, 3, JSON.stringify(runs));
    assert.equal(runs.find((run) => run.id === last)?.status, 'succeeded', JSON.stringify(runs));
    const checkpoints = (await a.ask({ path: `${P}/${id}/checkpoints`, headers: ALICE })).json() as { run_id: string | null }[];
    assert.ok(checkpoints.some((checkpoint) => checkpoint.run_id === last), `the queued turn's checkpoint, taken where it ran: ${JSON.stringify(checkpoints)}`);
    // Through B, the same state: what A's worktree held when the queued turn ended.
    assert.deepEqual(await changed(b, id), ['before-the-queued-turn.txt']);
  });
});
