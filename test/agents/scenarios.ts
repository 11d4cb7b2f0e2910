import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as v from 'valibot';
import type { WireEvent } from '../../domain/events.ts';
import { probeSandbox } from '../../adapters/acp/sandbox-probe.ts';
import { WorldFileSchema } from '../../src/world/schema.ts';
import { typesOf } from '../support/live-client.ts';
import { probeAdvertised, type Advertised } from './advertised.ts';
import { HOLD_MARKER, type FakeModel } from './fakes/server.ts';
import { AGENT_PACKAGES, agentCacheDir, installedAgent } from './install.ts';
import { git } from '../support/git-repo.ts';
import { processesMentioning, REPO_PROJECT, removeScratch, scratchDir, startService, type Service, type WorldAgent } from './service.ts';

/** An approval option as a pending item shows it. */
export interface ShownOption {
  readonly id: string;
  readonly name: string;
  readonly kind?: string;
}

/** How one real agent is run and what it should do (see {@link describeRealAgent}). */
export interface RealAgentSpec {
  readonly name: 'codex' | 'claude' | 'gemini';
  /** A reason to skip this agent here, or false. */
  readonly skip: string | false;
  /** Whether a missing install fails the tier rather than skipping the agent (Codex must run). */
  readonly required?: boolean;
  readonly startFake: () => Promise<FakeModel>;
  /** The world entry, given the fake, a scratch directory of the agent's own and its argv. */
  readonly worldAgent: (fake: FakeModel, scratch: string, argv: string[]) => WorldAgent;
  /** Variables of the service's own environment (what `env_pass` passes through: the API key). */
  readonly serviceEnv?: Record<string, string>;
  /** A posture in which writing a file asks for approval, and one in which it does not. */
  readonly askingMode: string;
  readonly freeMode: string;
  /** The option that allows the write once, and the one that refuses it. */
  readonly allowOption: (options: readonly ShownOption[]) => ShownOption | undefined;
  readonly rejectOption: (options: readonly ShownOption[]) => ShownOption | undefined;
  /** How a turn whose only tool call was refused ends: `run_finished` (the agent goes on) or `run_cancelled` (it stops). */
  readonly refusedEnd: 'run_finished' | 'run_cancelled';
  /** What every request to the fake model must carry (the passed key), checked at the end. */
  readonly checkRequests?: (fake: FakeModel) => void;
  /** The key passed through `env_pass`: it must never show in the service's log. */
  readonly secret?: string;
  /** Bound of one turn, approval included. */
  readonly turnMs: number;
}

/** The end-of-turn events, in order, with `end` the run's last event. */
const ended = (events: readonly WireEvent[]) => events.some((event) => event.type === 'reflex_asleep');

/**
 * The tier's scenarios for one real agent, driven through the service (src/main.ts in a child
 * process) over HTTP and the live socket, with every model call answered by a fake on 127.0.0.1:
 * an approved write, a write in a posture that asks nothing, a refused write, two threads of one
 * repository project writing at once (each in its worktree, then merged), and the vocabularies
 * `/permissions` and `/routes` offer compared with what the agent advertises to a client of its own.
 */
export function describeRealAgent(spec: RealAgentSpec): void {
  const pkg = AGENT_PACKAGES.find((candidate) => candidate.name === spec.name)!;
  const installed = installedAgent(pkg);
  const missing = `${pkg.pkg}@${pkg.version} is not installed in ${agentCacheDir()} (npm run test:agents installs it)`;
  const skip = spec.skip || (installed === null && !spec.required ? missing : false);
  if (skip) console.log(`# ${spec.name}: skipped: ${skip}`);

  describe(`${spec.name} (${pkg.pkg}@${pkg.version}) through the service`, { skip }, () => {
    let scratch: string;
    let fake: FakeModel;
    let service: Service;
    let agent: WorldAgent;
    let advertised: Advertised;

    before(async () => {
      assert.ok(installed, missing);
      scratch = scratchDir(spec.name);
      fake = await spec.startFake();
      agent = spec.worldAgent(fake, scratch, installed!.argv);
      if (learnsVocabularies()) {
        // The service learns what the agent offers: the world names none of it, so nothing narrows it.
        const { models: _m, efforts: _e, permission_modes: _p, default_permission_mode: _d, ...bare } = agent;
        agent = bare;
      }
      const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TMPDIR: process.env.TMPDIR ?? '/tmp', ...agent.env };
      for (const name of agent.env_pass ?? []) if (spec.serviceEnv?.[name] !== undefined) env[name] = spec.serviceEnv[name];
      advertised = await probeAdvertised(agent.command, env, join(scratch, 'probe-cwd'));
      service = await startService(scratch, agent, spec.serviceEnv);
    }, { timeout: 120_000 });

    after(async () => {
      await service?.stop();
      // The service ends each agent's process group as it exits: nothing of the agent may be left. A process of the
      // group killed as the service exited may take a moment to be torn down: looked for again for up to 2 s, so
      // only one still running then counts (twice the test saw one mid-teardown, its SIGKILL already sent).
      let left = installed ? processesMentioning(installed.dir) : [];
      for (let waited = 0; left.length > 0 && waited < 2_000; waited += 50) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        left = processesMentioning(installed!.dir);
      }
      for (const pid of left) process.kill(pid, 'SIGKILL');
      await fake?.close();
      // For diagnosis: what the agent sent its model, and what the service logged.
      if (process.env.AGENT_TIER_DUMP) {
        writeFileSync(join(process.env.AGENT_TIER_DUMP, `${spec.name}-requests.json`), JSON.stringify(fake?.requests ?? [], null, 1));
        writeFileSync(join(process.env.AGENT_TIER_DUMP, `${spec.name}-service.log`), service?.log().join('\n') ?? '');
      }
      removeScratch(scratch);
      assert.deepEqual(left, [], 'agent processes outlived the service');
    }, { timeout: 30_000 });

    /** Sends a directive on a new console thread; resolves with its answer and live socket. */
    async function directive(text: string, project: string, mode: string) {
      const key = randomUUID();
      const live = await service.live(key);
      const answer = await service.api('POST', `/threads/${key}/directives`, { text, project, permission_mode: mode });
      assert.equal(answer.status, 202, JSON.stringify(answer.json));
      return { live, ...(answer.json as { thread_id: string; run_id: string; conversation_id: string }) };
    }

    /** The run's row (its directory is where the agent's session ran). */
    async function runOf(threadId: string, conversationId: string, runId: string) {
      const runs = await service.api('GET', `/threads/${threadId}/conversations/${conversationId}/runs`);
      assert.equal(runs.status, 200);
      const run = runs.json.items.find((item: { id: string }) => item.id === runId);
      assert.ok(run, 'the run is listed');
      return run as { id: string; directory: string; status: string; error: string | null; started_at: string; ended_at: string };
    }

    const diagnose = (error: unknown): never => {
      const log = service.log().filter((line) => /agent|acp|run|error|warn/i.test(line)).slice(-40).join('\n');
      throw new Error(`${(error as Error).message}\n--- service log (last lines about the agent) ---\n${log}`, { cause: error });
    };

    it('runs in the service\'s bubblewrap sandbox wherever one can be made here (each turn below runs inside it)', { timeout: 90_000 }, async (t) => {
      const probe = await probeSandbox(process.env.PATH ?? '/usr/bin:/bin');
      // Ready once the agent has said what it offers (503 agents_not_known until then): the sandbox is told then.
      let ready: { status?: string; agent_sandbox?: { kind: string; detail: string } } = {};
      for (const started = Date.now(); ready.status !== 'ready' && Date.now() - started < 60_000;) {
        ready = await (await fetch(`http://127.0.0.1:${service.port}/readyz`)).json() as typeof ready;
        if (ready.status !== 'ready') await new Promise((resolve) => setTimeout(resolve, 200));
      }
      if (!probe.ok) {
        t.skip(`no sandbox here: ${probe.reason}`);
        assert.equal(ready.agent_sandbox?.kind, 'none', 'the service says so');
        return;
      }
      assert.equal(ready.agent_sandbox?.kind, 'bubblewrap', JSON.stringify(ready));
    });

    it('asks before writing a file; approved over /responses, the file is in the run directory', { timeout: spec.turnMs + 30_000 }, async (t) => {
      const task = { name: 'approved.txt', text: `written by ${spec.name} after approval` };
      const turn = await directive(`Create the file ${task.name} containing: ${task.text}`, 'approve', spec.askingMode);
      try {
        const asked = await turn.live.until((events) => events.some((e) => e.type === 'approval_requested') || ended(events), spec.turnMs).catch(diagnose);
        assert.ok(asked.some((e) => e.type === 'approval_requested'), `no approval asked: ${typesOf(asked).join(', ')}`);
        const pending = await service.api('GET', `/threads/${turn.thread_id}/pending`);
        assert.equal(pending.status, 200);
        assert.equal(pending.json.length, 1, JSON.stringify(pending.json));
        const item = pending.json[0];
        t.diagnostic(`pending item: ${JSON.stringify(item)}`);
        assert.equal(item.kind, 'approval');
        assert.equal(item.run_id, turn.run_id);
        const allow = spec.allowOption(item.options);
        assert.ok(allow, `no allow option among ${JSON.stringify(item.options)}`);
        // The item carries the tool call it asks about, with the diff to approve; options keep their ACP kinds.
        assert.ok(item.tool_call, `the approval carries no tool call: ${JSON.stringify(item)}`);
        assertShowsDiff(item.tool_call, task);
        assert.equal(allow.kind, 'allow_once', JSON.stringify(item.options));
        assert.ok(!existsSync(join((await runOf(turn.thread_id, turn.conversation_id, turn.run_id)).directory, task.name)), 'written before approval');

        const answered = await service.api('POST', `/threads/${turn.thread_id}/responses`, { responses: [{ id: item.id, option: allow.id }] });
        assert.equal(answered.status, 202, JSON.stringify(answered.json));
        const events = await turn.live.until(ended, spec.turnMs).catch(diagnose);
        const types = typesOf(events);
        assert.ok(types.includes('run_finished'), types.join(', '));
        assert.equal(types.at(-1), 'reflex_asleep');
        assert.ok(types.indexOf('run_finished') < types.indexOf('reflex_asleep'));
        // The asked-about call runs to completion on the socket, under the id the approval showed.
        const updates = events.filter((e) => e.type === 'tool_call' && (e.data as { id?: string }).id === item.tool_call.id);
        const statuses = updates.map((e) => (e.data as { status?: string }).status).filter((status) => status !== undefined);
        assert.equal(statuses.at(-1), 'completed', JSON.stringify(updates.map((e) => e.data)));
        const run = await runOf(turn.thread_id, turn.conversation_id, turn.run_id);
        assert.equal(run.status, 'succeeded');
        assert.equal(readFileSync(join(run.directory, task.name), 'utf8').trim(), task.text);
        assert.equal((await service.api('GET', `/threads/${turn.thread_id}/pending`)).json.length, 0, 'the answered item is gone');
      } finally {
        turn.live.close();
      }
    });

    it(`writes without asking in ${spec.freeMode}`, { timeout: spec.turnMs + 30_000 }, async () => {
      const task = { name: 'free.txt', text: `written by ${spec.name} without asking` };
      const turn = await directive(`Create the file ${task.name} containing: ${task.text}`, 'posture', spec.freeMode);
      try {
        const events = await turn.live.until(ended, spec.turnMs).catch(diagnose);
        const types = typesOf(events);
        assert.ok(!types.includes('approval_requested'), types.join(', '));
        assert.ok(types.includes('run_finished'), types.join(', '));
        const run = await runOf(turn.thread_id, turn.conversation_id, turn.run_id);
        assert.equal(run.status, 'succeeded');
        assert.equal(readFileSync(join(run.directory, task.name), 'utf8').trim(), task.text);
      } finally {
        turn.live.close();
      }
    });

    it('a refused approval writes nothing, and the turn still ends', { timeout: spec.turnMs + 30_000 }, async () => {
      const task = { name: 'refused.txt', text: 'must never be written' };
      const turn = await directive(`Create the file ${task.name} containing: ${task.text}`, 'refuse', spec.askingMode);
      try {
        await turn.live.until((events) => events.some((e) => e.type === 'approval_requested') || ended(events), spec.turnMs).catch(diagnose);
        const pending = await service.api('GET', `/threads/${turn.thread_id}/pending`);
        assert.equal(pending.json.length, 1, JSON.stringify(pending.json));
        const reject = spec.rejectOption(pending.json[0].options);
        assert.ok(reject, `no reject option among ${JSON.stringify(pending.json[0].options)}`);
        assert.equal(reject.kind, 'reject_once');
        const answered = await service.api('POST', `/threads/${turn.thread_id}/responses`, { responses: [{ id: pending.json[0].id, option: reject.id }] });
        assert.equal(answered.status, 202);
        const events = await turn.live.until(ended, spec.turnMs).catch(diagnose);
        const types = typesOf(events);
        assert.ok(types.includes(spec.refusedEnd), types.join(', '));
        assert.equal(types.at(-1), 'reflex_asleep');
        const run = await runOf(turn.thread_id, turn.conversation_id, turn.run_id);
        assert.equal(run.status, spec.refusedEnd === 'run_finished' ? 'succeeded' : 'cancelled');
        assert.ok(!existsSync(join(run.directory, task.name)), 'the refused file was written');
        // The thread takes the next directive.
        const next = await service.api('POST', `/threads/${turn.thread_id}/directives`, { text: 'Say hello', project: 'refuse' });
        assert.equal(next.status, 202, JSON.stringify(next.json));
        const later = await turn.live.until((all) => all.filter((e) => e.type === 'reflex_asleep').length === 2, spec.turnMs).catch(diagnose);
        assert.ok(typesOf(later).lastIndexOf('run_finished') > typesOf(later).indexOf('reflex_asleep'));
      } finally {
        turn.live.close();
      }
    });

    it('two threads of one repository project write at once, each in its own worktree; each shows only its file; the merges land both', { timeout: spec.turnMs * 2 + 30_000 }, async () => {
      const tasks = [1, 2].map((n) => ({ name: `thread-${n}.txt`, text: `written by ${spec.name} in thread ${n}` }));
      const turns = await Promise.all(tasks.map((task) => directive(`Create the file ${task.name} containing: ${task.text}`, REPO_PROJECT, spec.freeMode)));
      try {
        await Promise.all(turns.map((turn) => turn.live.until(ended, spec.turnMs))).catch(diagnose);
        const worktrees: { path: string; branch: string; base: string }[] = [];
        for (const [i, turn] of turns.entries()) {
          const task = tasks[i]!;
          const run = await runOf(turn.thread_id, turn.conversation_id, turn.run_id);
          assert.equal(run.status, 'succeeded', run.error ?? '');
          const row = await service.api('GET', `/threads/${turn.thread_id}`);
          const worktree = row.json.worktree as { path: string; branch: string; base: string };
          assert.deepEqual({ branch: worktree.branch, base: worktree.base }, { branch: `console/${turn.thread_id}`, base: 'main' });
          assert.equal(run.directory, worktree.path, "the run's directory is the thread's worktree");
          assert.equal(readFileSync(join(worktree.path, task.name), 'utf8').trim(), task.text);
          worktrees.push(worktree);
          const changes = await service.api('GET', `/threads/${turn.thread_id}/changes`);
          assert.equal(changes.status, 200, JSON.stringify(changes.json));
          assert.deepEqual(changes.json.files.map((f: { path: string; status: string }) => [f.path, f.status]), [[task.name, 'added']], 'each thread shows only its own file');
        }
        assert.notEqual(worktrees[0]!.path, worktrees[1]!.path);
        // At once: each run started before the other ended.
        const [a, b] = await Promise.all(turns.map((turn) => runOf(turn.thread_id, turn.conversation_id, turn.run_id)));
        assert.ok(a!.started_at < b!.ended_at && b!.started_at < a!.ended_at, `the runs did not overlap: ${JSON.stringify([a, b])}`);
        for (const turn of turns) {
          const merged = await service.api('POST', `/threads/${turn.thread_id}/changes/merge`, { strategy: 'squash' });
          assert.equal(merged.status, 200, JSON.stringify(merged.json));
          assert.equal(merged.json.base, 'main');
        }
        const repo = git(worktrees[0]!.path, 'rev-parse', '--path-format=absolute', '--git-common-dir');
        for (const task of tasks) assert.equal(git(repo, 'show', `main:${task.name}`), task.text, `${task.name} is in main`);
        for (const turn of turns) assert.deepEqual((await service.api('GET', `/threads/${turn.thread_id}/changes`)).json.files, [], 'nothing left to merge');
      } finally {
        for (const turn of turns) turn.live.close();
      }
    });

    it('GET /permissions and GET /routes offer what the agent advertises', async (t) => {
      t.diagnostic(`${spec.name} advertises: ${JSON.stringify(advertised)}`);
      const permissions = await service.api('GET', '/permissions');
      assert.equal(permissions.status, 200);
      const postures = permissions.json.find((entry: { agent: string }) => entry.agent === agent.id);
      assert.ok(postures, JSON.stringify(permissions.json));
      const routes = await service.api('GET', '/routes');
      assert.equal(routes.status, 200);
      const ours = routes.json.filter((route: { agent: string }) => route.agent === agent.id);
      // As the service reads them (adapters/acp/offer.ts): the `model` config option, else the session's `models` field
      // (Codex's adapter sends both, `models` with an entry per model and effort: `gpt-5.5[high]`).
      const modelOption = advertised.configOptions.find((option) => option.category === 'model') ?? advertised.configOptions.find((option) => option.id === 'model');
      const advertisedModels = modelOption?.values ?? advertised.models ?? [];
      if (agent.permission_modes === undefined) {
        // Learned from the agent: exactly its modes, its current mode the default, and a route per model.
        assert.deepEqual(postures.modes, advertised.modes);
        assert.equal(postures.default, advertised.currentMode);
        const effort = advertised.configOptions.find((option) => option.category === 'thought_level')
          ?? advertised.configOptions.find((option) => ['thought_level', 'reasoning_effort', 'effort'].includes(option.id));
        if (agent.efforts === undefined) assert.deepEqual(postures.efforts, effort?.values ?? []);
        assert.equal(postures.unavailable, null);
        assert.equal(postures.steering, advertised.steering, 'steering as the agent advertises it');
        const expected = advertisedModels.length === 0 ? [agent.id] : advertisedModels.map((model) => `${agent.id}:${model}`);
        assert.deepEqual(ours.map((route: { id: string }) => route.id).sort(), expected.sort());
      } else {
        // Narrowed by the world file: the world's lists, each of them something the agent really offers.
        assert.deepEqual(postures.modes, agent.permission_modes);
        for (const mode of postures.modes) assert.ok(advertised.modes.includes(mode), `${mode} is not a mode of ${spec.name} (${advertised.modes.join(', ')})`);
        assert.equal(postures.default, agent.default_permission_mode);
        for (const route of ours) if (route.model !== null) assert.ok(advertisedModels.includes(route.model), `${route.model} is not a model of ${spec.name}`);
      }
    });

    it('steers a message into the running turn where the agent advertises steering: the model\'s next call in that turn carries it', { timeout: spec.turnMs + 30_000 }, async (t) => {
      if (!advertised.steering || fake.holds === undefined) {
        t.skip(advertised.steering ? 'its fake model cannot hold a call open yet' : `${pkg.pkg}@${pkg.version} does not advertise steering (a steer is queued: test/http/steer.test.ts)`);
        return;
      }
      const turn = await directive(`${HOLD_MARKER}, then answer.`, 'steer', spec.freeMode);
      try {
        // The turn waits on its model: its first call is held open by the fake.
        const first = await Promise.race([fake.holds.held().then(() => 'held'), turn.live.until(ended, spec.turnMs).then(() => 'ended', () => 'no end')]);
        assert.equal(first, 'held', 'the turn ended before its model was called');
        const held = fake.requests.length;
        const steered = await service.api('POST', `/threads/${turn.thread_id}/directives`, { text: 'Also mention the word STEERED-4711.', when_busy: 'steer' });
        assert.equal(steered.status, 202, JSON.stringify(steered.json));
        assert.deepEqual([steered.json.steered, steered.json.run_id], [true, turn.run_id], JSON.stringify(steered.json));
        fake.holds.release();
        const events = await turn.live.until(ended, spec.turnMs).catch(diagnose);
        const types = typesOf(events);
        assert.ok(types.includes('run_finished'), types.join(', '));
        assert.equal(types.filter((type) => type === 'run_started').length, 1, 'no run of its own');
        assert.deepEqual(events.filter((e) => e.type === 'steered').map((e) => e.data.run_id), [turn.run_id]);
        // A later model call of the same turn carries the steered text among the user's messages
        // (`messages` of the Messages API, `input` of the Responses API).
        const later = fake.requests.slice(held).filter((request) => userMessages(request.body).length > 0);
        const carried = later.some((request) => userMessages(request.body).some((message) => JSON.stringify(message.content).includes('STEERED-4711')));
        assert.ok(carried, `no model call after the steer carried it: ${later.length} calls`);
        assert.equal((await runOf(turn.thread_id, turn.conversation_id, turn.run_id)).status, 'succeeded');
      } finally {
        fake.holds.release();
        turn.live.close();
      }
    });

    it("forks the agent's session where it offers session/fork: the fork's first model call carries the source's exchange as the agent's own, with no brief", { timeout: spec.turnMs * 2 + 30_000 }, async (t) => {
      if (!advertised.fork) {
        t.skip(`${pkg.pkg}@${pkg.version} does not offer session/fork (a fork starts from a brief: test/http/forks.test.ts)`);
        return;
      }
      const source = await directive('Remember the word FORKSOURCE-3141 and answer.', 'plain', spec.freeMode);
      try {
        await source.live.until(ended, spec.turnMs).catch(diagnose);
      } finally {
        source.live.close();
      }
      const [latest] = (await service.api('GET', `/threads/${source.thread_id}/messages?limit=1`)).json.items;
      const before = fake.requests.length;
      const forked = await service.api('POST', `/threads/${source.thread_id}/fork`, { message_id: latest.id, text: 'Now say FORKED-2718.' });
      assert.equal(forked.status, 201, JSON.stringify(forked.json));
      const live = await service.live(forked.json.thread_id);
      try {
        await live.until(ended, spec.turnMs).catch(diagnose);
      } finally {
        live.close();
      }
      const ledger = (await service.api('GET', `/threads/${forked.json.thread_id}/messages?limit=50`)).json.items.map((m: { role: string; text: string }) => `${m.role}: ${m.text}`);
      assert.ok(ledger.some((line: string) => line.startsWith('system: This thread is a fork: its agent continues a copy')), `the fork's session was not forked: ${ledger.join(' | ')}`);
      // The model call of the fork's turn: the new text, the source's exchange before it, and no brief.
      // (An agent may make calls of its own beside the turn's, e.g. Codex's title call: one of them is the turn's.)
      const calls = fake.requests.slice(before).map((request) => JSON.stringify(request.body ?? {}));
      assert.ok(calls.some((body) => body.includes('FORKED-2718') && body.includes('FORKSOURCE-3141')), "no model call carried the fork's directive after the source's exchange");
      assert.ok(!calls.some((body) => body.includes('Context: this conversation continues')), 'no history brief');
    });

    it('every model call went to the fake on loopback, with the passed key, which the log never shows', () => {
      assert.ok(fake.requests.length > 0, 'the fake model was never called');
      spec.checkRequests?.(fake);
      if (spec.secret !== undefined) assert.ok(!service.log().some((line) => line.includes(spec.secret!)), 'the passed key shows in the service log');
    });
  });
}

/**
 * Whether this service learns each agent's vocabularies from the agent itself (its world file then
 * takes an agent entry with no lists). Until it does, the world lists them and `/permissions` and
 * `/routes` are checked against the agent's advertisement as a narrowing of it.
 */
function learnsVocabularies(): boolean {
  const world = { users: [], projects: [], agents: [{ id: 'probe', command: ['probe'] }], channels: [] };
  return v.safeParse(WorldFileSchema, world).success;
}

/** The user's messages of a model call: its `messages` (Anthropic Messages API) or its `input` (OpenAI Responses API). */
function userMessages(body: any): { content: unknown }[] {
  const items = [...(Array.isArray(body?.messages) ? body.messages : []), ...(Array.isArray(body?.input) ? body.input : [])];
  return items.filter((item: any) => item?.role === 'user');
}

/** The pending item's tool call shows the write it asks about: a diff of the file with its new text. */
function assertShowsDiff(toolCall: any, task: { name: string; text: string }): void {
  const diffs = (toolCall.content ?? []).filter((part: any) => part?.type === 'diff');
  assert.ok(diffs.length > 0, `the approval's tool call has no diff: ${JSON.stringify(toolCall)}`);
  assert.ok(diffs.some((diff: any) => String(diff.path).endsWith(task.name) && String(diff.newText).includes(task.text)), JSON.stringify(diffs));
}

/** A fresh directory under the agent's scratch (a HOME, a CODEX_HOME). */
export function freshDir(scratch: string, name: string): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { recursive: true });
  return dir;
}
