import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import type { Agent } from '../../domain/model.ts';
import type { AgentRunner, PermissionAsk, PermissionDecision, TurnRequest, TurnUpdate } from '../../ports/agent-runner.ts';
import { builtDemoAgent } from '../support/built.ts';

const log = pino({ level: 'silent' });
const demo: Agent = {
  id: 'demo',
  models: ['opus', 'sonnet'],
  efforts: ['low', 'high'],
  permission_modes: ['default', 'acceptEdits', 'plan'],
  default_permission_mode: 'default',
  command: null,
};
const TEST_TIMEOUT = 30_000;

/** Fails instead of waiting forever: every wait in these tests is bounded. */
async function within<T>(promise: Promise<T>, ms = 15_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

interface Posture {
  mode: string;
  model: string;
  effort: string;
  turn: number;
  sessions: number;
  pid: number;
}

/** The demo agent's closing line: the posture it has and counters that show session reuse. */
function postureOf(text: string): Posture {
  const match = /\[demo\] mode=(\S+) model=(\S+) effort=(\S+) turn=(\d+) sessions=(\d+) pid=(\d+)/.exec(text);
  assert.ok(match, `no posture line in ${JSON.stringify(text)}`);
  const [, mode, model, effort, turn, sessions, pid] = match;
  return { mode: mode!, model: model!, effort: effort!, turn: Number(turn), sessions: Number(sessions), pid: Number(pid) };
}

let scratch: string;

/** Runs one turn and records everything the runner reported. */
async function turn(runner: AgentRunner, overrides: Partial<TurnRequest> = {}) {
  const updates: TurnUpdate[] = [];
  const sessions: string[] = [];
  const result = await within(
    runner.runTurn({
      agent: demo,
      sessionId: null,
      cwd: join(scratch, 'work', 'nested'),
      prompt: 'hello',
      mode: null,
      model: null,
      effort: null,
      onPermission: async () => ({ outcome: 'selected', optionId: 'allow' }),
      ...overrides,
      onSession: async (id) => {
        sessions.push(id);
        await overrides.onSession?.(id);
      },
      onUpdate: async (update) => {
        updates.push(update);
        await overrides.onUpdate?.(update);
      },
    }),
  );
  const text = updates.flatMap((update) => (update.kind === 'text' ? [update.text] : [])).join('');
  return { result, updates, sessions, text, posture: postureOf(text) };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('the ACP agent runner, against the demo agent', { timeout: 120_000 }, () => {
  let runner: AgentRunner;
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'acp-runner-'));
    runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log });
  });
  after(async () => {
    await runner.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it('streams a turn in order, creates the cwd and resolves end_turn', { timeout: TEST_TIMEOUT }, async () => {
    const first = await turn(runner);
    assert.equal(first.result.stopReason, 'end_turn');
    assert.deepEqual(first.sessions, [first.result.sessionId]);
    assert.ok(existsSync(join(scratch, 'work', 'nested')));
    assert.deepEqual(
      first.updates.map((update) => update.kind),
      ['text', 'commands', 'thought', 'plan', 'tool_call', 'tool_call_update', 'text', 'text', 'text', 'text', 'usage'],
    );
    assert.match(first.text, /^Working on: hello\nAll done here\.\n\[demo\] /);
    assert.deepEqual(first.updates[1], { kind: 'commands', commands: [{ name: 'review', description: 'Review the changes so far', hint: 'what to look at' }] });
    assert.deepEqual(first.updates[4], { kind: 'tool_call', call: { id: 'call-1', title: 'Look around the workspace', kind: 'read', status: 'pending' } });
    assert.deepEqual(first.updates[5], { kind: 'tool_call_update', call: { id: 'call-1', status: 'completed' } });
    assert.deepEqual(first.updates[3], { kind: 'plan', entries: [{ content: 'Answer the prompt', priority: 'medium', status: 'in_progress' }] });
    assert.deepEqual(first.updates[10], { kind: 'usage', used: 1200, size: 200_000, cost: { amount: 0.01, currency: 'USD' } });
  });

  it('delivers updates in order even when the caller is slow to take them', { timeout: TEST_TIMEOUT }, async () => {
    const seen: string[] = [];
    const { updates } = await turn(runner, {
      onUpdate: async (update) => {
        await sleep(update.kind === 'text' ? 30 : 1);
        seen.push(update.kind);
      },
    });
    assert.equal(updates.length, seen.length);
    assert.deepEqual(seen, ['text', 'commands', 'thought', 'plan', 'tool_call', 'tool_call_update', 'text', 'text', 'text', 'text', 'usage']);
  });

  it('reuses a session: no new session, the agent counts a second turn', { timeout: TEST_TIMEOUT }, async () => {
    const first = await turn(runner);
    const second = await turn(runner, { sessionId: first.result.sessionId });
    assert.equal(second.result.sessionId, first.result.sessionId);
    assert.deepEqual(second.sessions, []);
    assert.equal(second.posture.turn, 2);
    assert.equal(second.posture.sessions, first.posture.sessions);
    assert.equal(second.posture.pid, first.posture.pid);
  });

  it('brings mode, model and effort to the agent before the prompt', { timeout: TEST_TIMEOUT }, async () => {
    const fresh = await turn(runner);
    assert.deepEqual([fresh.posture.mode, fresh.posture.model, fresh.posture.effort], ['default', 'opus', 'low']);
    const set = await turn(runner, { sessionId: fresh.result.sessionId, mode: 'plan', model: 'sonnet', effort: 'high' });
    assert.deepEqual([set.posture.mode, set.posture.model, set.posture.effort], ['plan', 'sonnet', 'high']);
    // What the agent does not offer is skipped, and the rest still arrives.
    const odd = await turn(runner, { sessionId: fresh.result.sessionId, mode: 'bypass', model: 'gpt', effort: 'low' });
    assert.deepEqual([odd.posture.mode, odd.posture.model, odd.posture.effort], ['plan', 'sonnet', 'low']);
  });

  it('asks permission with the agent options and answers with the choice', { timeout: TEST_TIMEOUT }, async () => {
    const decide = (decision: PermissionDecision) => async () => decision;
    const asked: PermissionAsk[] = [];
    const rejected = await turn(runner, { prompt: 'edit [approval]', onPermission: async (ask) => (asked.push(ask), { outcome: 'selected', optionId: 'reject' }) });
    assert.match(rejected.text, /Permission: reject\./);
    const path = join(scratch, 'work', 'nested', 'notes.md');
    const newText = '# Notes\n- edit [approval]\n';
    // The ask carries its tool call whole: what an edit is, its diff, where and with what input.
    assert.deepEqual(asked, [
      {
        title: `Write ${path}`,
        options: [
          { id: 'allow', name: 'Allow', kind: 'allow_once' },
          { id: 'reject', name: 'Reject', kind: 'reject_once' },
        ],
        tool_call: {
          id: 'edit-1', title: `Write ${path}`, kind: 'edit', status: 'pending',
          content: [{ type: 'diff', path, oldText: null, newText }],
          locations: [{ path, line: 1 }],
          rawInput: { file_path: path, content: newText },
        },
      },
    ]);
    assert.ok(!existsSync(path), 'a refused edit writes nothing');
    assert.deepEqual(rejected.updates.find((update) => update.kind === 'tool_call_update' && update.call.id === 'edit-1'), {
      kind: 'tool_call_update', call: { id: 'edit-1', status: 'failed', content: [{ type: 'content', content: { type: 'text', text: 'The user refused the edit.' } }] },
    });
    const allowed = await turn(runner, { prompt: '[approval]', onPermission: decide({ outcome: 'selected', optionId: 'allow' }) });
    assert.match(allowed.text, /Permission: allow\./);
    assert.equal(readFileSync(path, 'utf8'), '# Notes\n- [approval]\n');
    const cancelled = await turn(runner, { prompt: '[approval]', onPermission: decide({ outcome: 'cancelled' }) });
    assert.match(cancelled.text, /Permission: cancelled\./);
    // An option the agent never offered cannot be chosen: it is answered as cancelled.
    const unknown = await turn(runner, { prompt: '[approval]', onPermission: decide({ outcome: 'selected', optionId: 'always' }) });
    assert.match(unknown.text, /Permission: cancelled\./);
  });

  it("rejects a turn the agent answers with an error, after what it streamed; the agent's own text is not in the reason", { timeout: TEST_TIMEOUT }, async () => {
    const updates: TurnUpdate[] = [];
    await assert.rejects(
      within(runner.runTurn({ ...base(), prompt: '[fail]', onUpdate: (update) => void updates.push(update) })),
      (error: Error) => /^the agent answered the request with error -?\d+$/.test(error.message) && !error.message.includes('asked to fail'),
    );
    assert.deepEqual(updates.filter((update) => update.kind === 'text'), [{ kind: 'text', text: 'Working on: [fail]\n' }]);
  });

  it('changes the mode of a live session; a session it does not know is left alone', { timeout: TEST_TIMEOUT }, async () => {
    const first = await turn(runner);
    await within(runner.setMode(demo, first.result.sessionId, 'acceptEdits'));
    await within(runner.setMode(demo, 'no-such-session', 'plan'));
    await within(runner.setMode({ ...demo, id: 'not-started' }, first.result.sessionId, 'plan'));
    const second = await turn(runner, { sessionId: first.result.sessionId });
    assert.equal(second.posture.mode, 'acceptEdits');
  });

  it('steers a running turn: injected while it runs (the agent says it in its reply), promptRequired once it ended', { timeout: TEST_TIMEOUT }, async () => {
    let sessionId: string | null = null;
    let working!: () => void;
    const atWork = new Promise<void>((resolve) => (working = resolve));
    const running = turn(runner, {
      prompt: 'hold [await-steer]',
      onSession: async (id) => void (sessionId = id),
      onUpdate: async (update) => {
        if (update.kind === 'text' && update.text.includes('Working on')) working();
      },
    });
    await within(atWork);
    assert.equal(await within(runner.steer(demo, sessionId!, 'mind the tests')), 'injected');
    const done = await running;
    assert.match(done.text, /Steered: mind the tests\n/);
    // The turn has ended: nothing is sent (no turn of the session is in flight here).
    assert.equal(await within(runner.steer(demo, done.result.sessionId, 'too late')), 'promptRequired');
    assert.equal(await within(runner.steer(demo, 'no-such-session', 'nowhere')), 'promptRequired');
  });

  it('an agent whose turn ended at its end first answers promptRequired (the race against the turn\'s end)', { timeout: TEST_TIMEOUT }, async () => {
    let sessionId: string | null = null;
    let working!: () => void;
    const atWork = new Promise<void>((resolve) => (working = resolve));
    const running = turn(runner, {
      prompt: 'ending [steer-late]',
      onSession: async (id) => void (sessionId = id),
      onUpdate: async (update) => {
        if (update.kind === 'text' && update.text.includes('Working on')) working();
      },
    });
    await within(atWork);
    assert.equal(await within(runner.steer(demo, sessionId!, 'late')), 'promptRequired');
    assert.doesNotMatch((await running).text, /Steered:/);
  });

  it('an agent that does not advertise steering is never sent one: unsupported', { timeout: TEST_TIMEOUT }, async () => {
    const codex: Agent = { ...demo, id: 'demo-codex', permission_modes: ['read-only', 'auto'], default_permission_mode: 'auto', env: { DEMO_AGENT_PROFILE: 'codex' } };
    let sessionId: string | null = null;
    let working!: () => void;
    const atWork = new Promise<void>((resolve) => (working = resolve));
    const controller = new AbortController();
    const running = turn(runner, {
      agent: codex,
      prompt: 'hold [wait]',
      signal: controller.signal,
      onSession: async (id) => void (sessionId = id),
      onUpdate: async (update) => {
        if (update.kind === 'text' && update.text.includes('Working on')) working();
      },
    }).catch((error: unknown) => error);
    await within(atWork);
    assert.equal(await within(runner.steer(codex, sessionId!, 'no')), 'unsupported');
    controller.abort();
    await running;
  });

  it('forks a session where the agent offers session/fork (a copy, no brief); a refused fork, or an agent that offers none, gets a briefed new session', { timeout: TEST_TIMEOUT }, async () => {
    const keeper: Agent = { ...demo, id: 'demo-keeper', env: { DEMO_AGENT_RESUME: join(scratch, 'kept-sessions') } };
    const brief = async () => '[user] Earlier';
    const source = await turn(runner, { agent: keeper });
    const second = await turn(runner, { agent: keeper, sessionId: source.sessions[0]! });
    assert.equal(second.posture.turn, 2);
    let forked = 0;
    const copy = await turn(runner, { agent: keeper, cwd: join(scratch, 'fork'), forkFrom: async () => source.sessions[0]!, history: brief, onForked: () => void (forked += 1) });
    assert.notEqual(copy.sessions[0], source.sessions[0], 'a session of its own');
    assert.equal(copy.posture.turn, 3, "the source's two turns come with the copy");
    assert.equal(forked, 1);
    assert.doesNotMatch(copy.text, /Earlier/, 'no brief');
    // The agent refuses a session it does not know: a new session, briefed.
    const refused = await turn(runner, { agent: keeper, forkFrom: async () => 'no-such-session', history: brief, onForked: () => void (forked += 1) });
    assert.equal(refused.posture.turn, 1);
    assert.match(refused.text, /Working on: \[user\] Earlier/, 'the brief went first');
    // An agent that offers no fork is never asked which session to fork.
    let asked = 0;
    const plain = await turn(runner, { forkFrom: async () => ((asked += 1), source.sessions[0]!), history: brief });
    assert.equal([asked, plain.posture.turn, forked].join(), '0,1,1');
    assert.match(plain.text, /Working on: \[user\] Earlier/);
  });

  it('runs two turns on two sessions of one process at the same time', { timeout: TEST_TIMEOUT }, async () => {
    const started = Date.now();
    const [one, two] = await Promise.all([turn(runner, { prompt: 'one [slow]' }), turn(runner, { prompt: 'two [slow]' })]);
    const elapsed = Date.now() - started;
    assert.notEqual(one.result.sessionId, two.result.sessionId);
    assert.equal(one.posture.pid, two.posture.pid);
    assert.match(one.text, /^Working on: one \[slow\]\n/);
    assert.match(two.text, /^Working on: two \[slow\]\n/);
    // Nine updates 300 ms apart each: about 2.7 s together, 5.4 s one after the other.
    assert.ok(elapsed < 5000, `took ${elapsed} ms`);
  });

  it('an agent that needs authentication fails with a clear reason naming its methods, never its own text', { timeout: TEST_TIMEOUT }, async () => {
    const locked = { ...demo, id: 'locked', env: { DEMO_AGENT_REQUIRE_AUTH: '1' } };
    await assert.rejects(within(runner.runTurn({ ...base(), agent: locked })), (error: Error) => {
      assert.equal(error.message, 'the agent needs authentication (it offers demo-login); give it credentials through its env or env_pass');
      return true;
    });
  });

  it('an agent that exits before it answers initialize fails with how it ended', { timeout: TEST_TIMEOUT }, async () => {
    const quitter = { ...demo, id: 'quitter', command: [process.execPath, '-e', 'process.exit(3)'] };
    await assert.rejects(within(runner.runTurn({ ...base(), agent: quitter })), /^Error: the agent could not start: exited with status 3$/);
  });

  it('rejects a turn whose agent command cannot start', { timeout: TEST_TIMEOUT }, async () => {
    const missing = { ...demo, id: 'missing', command: [join(scratch, 'no-such-agent')] };
    await assert.rejects(within(runner.runTurn({ ...base(), agent: missing })), /^Error: the agent could not start: its command was not found$/);
  });
});

describe('the ACP agent runner, when the agent process ends', { timeout: 120_000 }, () => {
  before(async () => {
    scratch ??= await mkdtemp(join(tmpdir(), 'acp-runner-'));
  });

  it('rejects a crashed turn promptly and restarts the process with a new session', { timeout: TEST_TIMEOUT }, async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log });
    try {
      const first = await turn(runner);
      const started = Date.now();
      await assert.rejects(within(runner.runTurn({ ...base(), sessionId: first.result.sessionId, prompt: '[crash]' })), /the agent process exited with status 1/);
      assert.ok(Date.now() - started < 5000, 'rejected promptly');
      assert.equal(isAlive(first.posture.pid), false);
      const next = await turn(runner, { sessionId: first.result.sessionId });
      assert.notEqual(next.posture.pid, first.posture.pid);
      assert.equal(next.sessions.length, 1);
      assert.notEqual(next.sessions[0], first.result.sessionId);
      assert.equal(next.result.sessionId, next.sessions[0]);
      assert.equal(next.posture.turn, 1);
    } finally {
      await runner.close();
    }
  });

  it('close() stops every agent process, and no turn runs after it', { timeout: TEST_TIMEOUT }, async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log });
    const [one, two] = await Promise.all([turn(runner), turn(runner, { agent: { ...demo, id: 'demo-2' } })]);
    assert.notEqual(one.posture.pid, two.posture.pid);
    await within(runner.close());
    assert.equal(isAlive(one.posture.pid), false);
    assert.equal(isAlive(two.posture.pid), false);
    await assert.rejects(runner.runTurn(base()), /closed/);
  });
});

function base(): TurnRequest {
  return {
    agent: demo,
    sessionId: null,
    cwd: join(scratch, 'work'),
    prompt: 'hello',
    mode: null,
    model: null,
    effort: null,
    onSession: () => {},
    onUpdate: () => {},
    onPermission: async () => ({ outcome: 'cancelled' }),
  };
}
