import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { World } from '../../domain/world.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const P = '/api/console/threads';
const asleep = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');
const has = (type: string) => (events: readonly WireEvent[]) => events.some((e) => e.type === type);

/** A service over memory storage holding the fixture world changed by `change`. */
async function serviceWith(change: (world: World) => World): Promise<TestService> {
  const storage = createMemoryStorage();
  await storage.importWorld(change(fixtureWorld()));
  return startService({}, { storage });
}

/** Drives directives on one service: a new console thread per `start`, its socket, its reads. */
function driver(service: () => TestService) {
  const post = (path: string, body: unknown) => service().ask({ method: 'POST', path, headers: ALICE, body: JSON.stringify(body) });
  const get = (path: string) => service().ask({ path, headers: ALICE });
  return {
    post,
    get,
    async start(text: string, project = 'acme-web') {
      const key = randomUUID();
      const socket = (await connectLive(service().port, { thread: key, after: '0' })) as LiveClient;
      const res = await post(`${P}/${key}/directives`, { text, project });
      assert.equal(res.status, 202, res.text);
      return { ...(res.json() as { thread_id: string; conversation_id: string; run_id: string }), socket };
    },
    runOf: async (t: { thread_id: string; conversation_id: string }) =>
      (await get(`${P}/${t.thread_id}/conversations/${t.conversation_id}/runs`)).json().items[0],
  };
}

describe('tool calls in full: the live socket and the approval item carry what ACP gives', () => {
  let service: TestService;
  before(async () => {
    service = await serviceWith((world) => world);
  });
  after(() => service.close());
  const d = driver(() => service);

  it('tool_call events carry the tool call (kind, status, updates with what changed); plan, usage and available_commands are events of their own', async () => {
    const t = await d.start('Say hello');
    const events = await t.socket.until(asleep);
    t.socket.close();
    const calls = events.filter((e) => e.type === 'tool_call').map((e) => e.data);
    assert.deepEqual(calls, [
      { run_id: t.run_id, update: false, id: 'call-1', title: 'Look around the workspace', kind: 'read', status: 'pending' },
      { run_id: t.run_id, update: true, id: 'call-1', status: 'completed' },
    ]);
    assert.deepEqual(events.find((e) => e.type === 'plan')?.data, { run_id: t.run_id, entries: [{ content: 'Answer the prompt', priority: 'medium', status: 'in_progress' }] });
    assert.deepEqual(events.find((e) => e.type === 'usage')?.data, { run_id: t.run_id, used: 1200, size: 200_000, cost: { amount: 0.01, currency: 'USD' } });
    assert.deepEqual(events.find((e) => e.type === 'available_commands')?.data, {
      run_id: t.run_id, commands: [{ name: 'review', description: 'Review the changes so far', hint: 'what to look at' }],
    });
    // Text deltas stay `message` events; thoughts too, as updates.
    assert.ok(events.some((e) => e.type === 'message' && typeof e.data.delta === 'string'));
    assert.ok(events.some((e) => e.type === 'message' && (e.data.update as { kind?: string } | undefined)?.kind === 'thought'));
    assert.ok(!events.some((e) => e.type === 'message' && ['tool_call', 'tool_call_update', 'plan'].includes(String((e.data.update as { kind?: string } | undefined)?.kind))));
  });

  it('an approval item carries the tool call it asks about (the diff, locations, raw input) and the options with their ACP kinds; allowed, the file is written in the run directory', async () => {
    const t = await d.start('Write it down [approval]');
    const events = await t.socket.until(has('approval_requested'));
    const run = await d.runOf(t);
    const path = join(run.directory, 'notes.md');
    const newText = '# Notes\n- Write it down [approval]\n';
    const toolCall = {
      id: 'edit-1', title: `Write ${path}`, kind: 'edit', status: 'pending',
      content: [{ type: 'diff', path, oldText: null, newText }],
      locations: [{ path, line: 1 }],
      rawInput: { file_path: path, content: newText },
    };
    // The same tool call was announced on the socket before the ask.
    assert.deepEqual(events.find((e) => e.type === 'tool_call' && e.data.id === 'edit-1')?.data, { run_id: t.run_id, update: false, ...toolCall });
    const pending = events.find((e) => e.type === 'approval_requested')!.data.pending;
    const listed = (await d.get(`${P}/${t.thread_id}/pending`)).json() as { id: string }[];
    assert.deepEqual(listed, [pending]);
    assert.deepEqual(listed[0], {
      id: listed[0]!.id, kind: 'approval', conversation_id: t.conversation_id, run_id: t.run_id, title: `Write ${path}`,
      options: [{ id: 'allow', name: 'Allow', kind: 'allow_once' }, { id: 'reject', name: 'Reject', kind: 'reject_once' }],
      tool_call: toolCall,
    });
    assert.ok(!existsSync(path), 'nothing is written before the answer');
    assert.equal((await d.post(`${P}/${t.thread_id}/responses`, { responses: [{ id: listed[0]!.id, option: 'allow' }] })).status, 202);
    const done = await t.socket.until(asleep);
    t.socket.close();
    assert.equal(readFileSync(path, 'utf8'), newText);
    assert.deepEqual(done.filter((e) => e.type === 'tool_call' && e.data.id === 'edit-1').at(-1)?.data, {
      run_id: t.run_id, update: true, id: 'edit-1', status: 'completed', rawOutput: { bytes: Buffer.byteLength(newText) },
    });
    assert.equal(done.at(-2)!.type, 'run_finished');
  });

  it('a refused edit writes nothing: its tool call update says failed, with the text the agent gave', async () => {
    const t = await d.start('Do not [approval]');
    const events = await t.socket.until(has('approval_requested'));
    const pending = events.find((e) => e.type === 'approval_requested')!.data.pending as { id: string; tool_call: { content: { path: string }[] } };
    const path = pending.tool_call.content[0]!.path;
    assert.equal((await d.post(`${P}/${t.thread_id}/responses`, { responses: [{ id: pending.id, option: 'reject' }] })).status, 202);
    const done = await t.socket.until(asleep);
    t.socket.close();
    assert.deepEqual(done.filter((e) => e.type === 'tool_call' && e.data.id === 'edit-1').at(-1)?.data, {
      run_id: t.run_id, update: true, id: 'edit-1', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'The user refused the edit.' } }],
    });
    assert.ok(!existsSync(path) || !readFileSync(path, 'utf8').includes('Do not'));
  });
});

describe('projects are real directories: a run works where its project names', () => {
  const repo = mkdtempSync(join(tmpdir(), 'console-repo-'));
  let service: TestService;
  before(async () => {
    service = await serviceWith((world) => ({ ...world, projects: [{ name: 'acme-web', directory: repo, repo: null, base: null }, { name: 'infra', directory: null, repo: null, base: null }] }));
  });
  after(() => service.close());
  const d = driver(() => service);

  it("a project's directory is the session's cwd and the run's directory; the file the agent writes is there", async () => {
    const t = await d.start('Note it [approval]');
    const events = await t.socket.until(has('approval_requested'));
    assert.equal((await d.runOf(t)).directory, repo);
    const pending = events.find((e) => e.type === 'approval_requested')!.data.pending as { id: string };
    await d.post(`${P}/${t.thread_id}/responses`, { responses: [{ id: pending.id, option: 'allow' }] });
    await t.socket.until(asleep);
    t.socket.close();
    assert.equal(readFileSync(join(repo, 'notes.md'), 'utf8'), '# Notes\n- Note it [approval]\n');
    assert.ok(!existsSync(join(service.config.dataDir, 'projects', 'acme-web', 'notes.md')));
  });

  it('a project without a directory still works under DATA_DIR; GET /projects answers names only', async () => {
    const t = await d.start('Hello', 'infra');
    await t.socket.until(asleep);
    t.socket.close();
    assert.equal((await d.runOf(t)).directory, join(service.config.dataDir, 'projects', 'infra'));
    assert.deepEqual((await d.get('/api/console/projects')).json(), ['acme-web', 'infra']);
  });
});

describe('agent processes: stderr at debug without secrets', () => {
  const passed = `pass-secret-${randomUUID()}`;
  const literal = `literal-secret-${randomUUID()}`;
  let service: TestService;
  before(async () => {
    process.env.DEMO_PASSED_SECRET = passed;
    service = await serviceWith((world) => ({
      ...world,
      agents: world.agents.map((agent) =>
        agent.id === 'claude' ? { ...agent, env: { DEMO_LITERAL: literal, DEMO_FLAG: '1' }, env_pass: ['DEMO_PASSED_SECRET'] } : agent),
    }));
  });
  after(async () => {
    delete process.env.DEMO_PASSED_SECRET;
    await service.close();
  });
  const d = driver(() => service);

  it("the agent's stderr is logged at debug, with the values of its env and env_pass redacted wherever they appear", async () => {
    const t = await d.start('Talk [stderr]');
    await t.socket.until(asleep);
    t.socket.close();
    const lines = service.logs.filter((line) => line.msg === 'agent stderr');
    const dump = lines.find((line) => String(line.stderr).startsWith('environment: '));
    assert.ok(dump, 'the stderr line is logged');
    assert.equal(dump.level, 20, 'at debug');
    assert.match(String(dump.stderr), /"DEMO_PASSED_SECRET":"\[redacted\]"/);
    assert.match(String(dump.stderr), /"DEMO_LITERAL":"\[redacted\]"/);
    assert.match(String(dump.stderr), /"DEMO_FLAG":"1"/, 'a short flag is no secret');
    const all = JSON.stringify(service.logs);
    assert.ok(!all.includes(passed) && !all.includes(literal), 'no log line holds a secret value');
  });
});
