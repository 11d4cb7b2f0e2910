import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import * as acp from '@agentclientprotocol/sdk';
import { lineSplitter, MAX_STDERR_LINE } from '../../adapters/acp/agent-diagnostics.ts';
import { startAgentProcess } from '../../adapters/acp/agent-process.ts';
import { type AcpAgentRunnerOptions, createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import type { Agent } from '../../domain/model.ts';
import type { TurnRequest } from '../../ports/agent-runner.ts';
import { createLogger } from '../../src/logging.ts';
import { builtDemoAgent } from '../support/built.ts';
import { waitFor } from '../support/wait-for.ts';

const BROKEN = fileURLToPath(new URL('../support/broken-acp-agent.mjs', import.meta.url));
const SILENT = [process.execPath, '-e', 'setInterval(() => {}, 1e9)'];
const SECRET = 'sk-provider-key-0123456789';
const TEST_TIMEOUT = 20_000;
let scratch: string;

/** Fails instead of waiting forever: every wait in these tests is bounded. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

/** An agent running the broken agent in mode `how`, writing its pid to a file of its own; `asked` is what it was asked so far. */
function broken(id: string, how: string, extra: Partial<Agent> = {}): { agent: Agent; pid: () => Promise<number>; asked: () => string[] } {
  const pidFile = join(scratch, `${id}.pid`);
  const agent: Agent = {
    id, models: null, efforts: null, permission_modes: null, default_permission_mode: null,
    command: [process.execPath, BROKEN, how, 'PROVIDER_KEY', pidFile], env: { BROKEN_AGENT_PID: pidFile }, env_pass: ['PROVIDER_KEY'], ...extra,
  };
  const asked = () => (existsSync(`${pidFile}.asked`) ? readFileSync(`${pidFile}.asked`, 'utf8').split('\n').filter(Boolean) : []);
  return { agent, pid: () => pidOf(pidFile), asked };
}

async function pidOf(file: string): Promise<number> {
  for (let i = 0; i < 100 && !existsSync(file); i++) await sleep(50);
  return Number(readFileSync(file, 'utf8'));
}

/**
 * Processes whose command line holds `marker` (the broken agent gets its pid file as an argument it ignores):
 * found even when the agent was ended before it could write its pid, as a busy machine may do to a 300 ms bound.
 */
function runningWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').includes(marker)) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function turn(agent: Agent, overrides: Partial<TurnRequest> = {}): TurnRequest {
  return {
    agent, sessionId: null, cwd: join(scratch, 'work'), prompt: 'hello', mode: null, model: null, effort: null,
    onSession: () => {}, onUpdate: () => {}, onPermission: async () => ({ outcome: 'cancelled' }), ...overrides,
  };
}

/** A runner whose log is captured (at debug, through the service's own logger), over a service environment holding the key. */
function captured(options: Partial<AcpAgentRunnerOptions> = {}) {
  const lines: string[] = [];
  const log = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString('utf8')), done()) }));
  const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: { PATH: process.env.PATH, PROVIDER_KEY: SECRET }, ...options });
  return { runner, text: () => lines.join('') };
}

describe('the ACP agent runner, against agents that hang or misbehave', { timeout: 120_000 }, () => {
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'acp-broken-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('an agent that never answers initialize: the turn fails within the start-up bound and no process is left', { timeout: TEST_TIMEOUT }, async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), startTimeoutMs: 300 });
    const { agent } = broken('silent', 'silent');
    try {
      const started = Date.now();
      await assert.rejects(within(runner.runTurn(turn(agent)), 5_000), /^Error: the agent could not start: did not answer initialize within 300 ms$/);
      assert.ok(Date.now() - started < 3_000, `took ${Date.now() - started} ms`);
      assert.deepEqual(runningWith(join(scratch, 'silent.pid')), []);
      // A bare command that never answers, as a misconfigured agent would be: the same.
      const bare = { ...agent, id: 'bare', command: SILENT };
      await assert.rejects(within(runner.runTurn(turn(bare)), 5_000), /did not answer initialize within 300 ms/);
    } finally {
      await runner.close();
    }
  });

  it('an agent that never answers session/new: the turn fails within the bound and its process group is ended', { timeout: TEST_TIMEOUT }, async () => {
    // The bound covers initialize too: 2 s, so a node process starting on a busy machine still answers it.
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), startTimeoutMs: 2_000 });
    const { agent, pid } = broken('no-session', 'no-session');
    try {
      await assert.rejects(within(runner.runTurn(turn(agent)), 8_000), /^Error: the agent did not answer session\/new within 2 s$/);
      assert.equal(isAlive(await pid()), false);
      // An agent that cannot load the session is not asked for a new one on a process it was stopped for.
      const second = broken('no-load', 'no-session');
      await assert.rejects(within(runner.runTurn(turn(second.agent, { sessionId: 'earlier' })), 8_000), /^Error: the agent did not answer session\/load within 2 s$/);
      assert.equal(isAlive(await second.pid()), false);
    } finally {
      await runner.close();
    }
  });

  it("two bounded requests on one process: each is refused as what it asked, though the other's bound ended the process first", { timeout: TEST_TIMEOUT }, async () => {
    // As the runner's probe session/new beside a turn's session/load: the first bound ends the process before the second's passes.
    const pidFile = join(scratch, 'two-bounds.pid');
    const proc = await startAgentProcess([process.execPath, BROKEN, 'no-session'], pino({ level: 'silent' }), { env: { BROKEN_AGENT_PID: pidFile }, startTimeoutMs: 2_000 });
    const cwd = join(scratch, 'work');
    const first = proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new');
    first.catch(() => {});
    await sleep(500);
    const second = proc.bounded(proc.agent.request(acp.methods.agent.session.load, { sessionId: 'earlier', cwd, mcpServers: [] }), 'session/load');
    await assert.rejects(within(first, 8_000), /^Error: the agent did not answer session\/new within 2 s$/);
    await assert.rejects(within(second, 8_000), /^Error: the agent did not answer session\/load within 2 s$/);
    assert.equal(isAlive(await pidOf(pidFile)), false);
    // Sent once the process was taken for broken: refused at once, as how it ended.
    await assert.rejects(within(proc.bounded(proc.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] }), 'session/new'), 1_000), /^Error: the agent process was stopped by SIGTERM$/);
  });

  it('a cancel while the agent starts rejects the turn at once; close() then ends the start promptly', { timeout: TEST_TIMEOUT }, async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }) });
    const { agent, pid } = broken('slow-start', 'silent');
    const controller = new AbortController();
    const running = runner.runTurn(turn(agent, { signal: controller.signal }));
    const agentPid = await pid();
    const cancelled = Date.now();
    controller.abort();
    await assert.rejects(within(running, 2_000), /^Error: the agent was not ready yet when the turn was cancelled$/);
    assert.ok(Date.now() - cancelled < 1_000, `took ${Date.now() - cancelled} ms`);
    // The start goes on (other turns may wait on it) until the runner closes, which does not wait for it.
    assert.equal(isAlive(agentPid), true);
    const closing = Date.now();
    await within(runner.close(), 5_000);
    assert.ok(Date.now() - closing < 4_000, `close took ${Date.now() - closing} ms`);
    assert.equal(isAlive(agentPid), false);
  });

  it('a cancel while the session opens rejects the turn at once, tells no session, and leaves the process to other turns', { timeout: TEST_TIMEOUT }, async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }) });
    const { agent, pid, asked } = broken('slow-session', 'no-session');
    try {
      const controller = new AbortController();
      const sessions: string[] = [];
      const running = runner.runTurn(turn(agent, { signal: controller.signal, onSession: (id) => void sessions.push(id) }));
      const agentPid = await pid();
      await waitFor(() => asked().includes('session/new'), { what: 'the session asked for' });
      controller.abort();
      await assert.rejects(within(running, 1_000), /not ready yet when the turn was cancelled/);
      assert.deepEqual(sessions, []);
      assert.equal(isAlive(agentPid), true);
      // Aborted before it began: nothing is started.
      const early = broken('never-started', 'silent');
      await assert.rejects(within(runner.runTurn(turn(early.agent, { signal: AbortSignal.abort() })), 1_000), /not ready yet/);
      await sleep(200); // a window in which no process must start
      assert.equal(existsSync(join(scratch, 'never-started.pid')), false);
    } finally {
      await within(runner.close(), 5_000);
    }
  });

  it("an agent's error text never reaches the log whole: its env_pass value is redacted wherever it is logged", { timeout: TEST_TIMEOUT }, async () => {
    const { runner, text } = captured();
    const { agent } = broken('leaky', 'session-error');
    try {
      // The offer probe (`session/new`), a turn that loads a session then opens a new one: each fails with the key in the agent's text.
      await within(runner.offers(agent), 5_000);
      for (let i = 0; i < 100 && !/did not say what it offers/.test(text()); i++) await sleep(50);
      await assert.rejects(within(runner.runTurn(turn(agent, { sessionId: 'earlier' })), 5_000), (error: Error) => error.message === 'the agent answered the request with error -32603');
    } finally {
      await runner.close();
    }
    const logged = text();
    assert.match(logged, /the agent answered an error/);
    assert.match(logged, /invalid key \[redacted\]/);
    assert.match(logged, /the agent did not say what it offers/);
    assert.match(logged, /the agent could not load the session/);
    assert.ok(!logged.includes(SECRET), logged);
  });

  it("stderr is redacted before it is cut, and a line without end is held only up to its cap", { timeout: TEST_TIMEOUT }, async () => {
    const { runner, text } = captured({ startTimeoutMs: 1_000 });
    const { agent } = broken('chatty', 'stderr');
    try {
      await assert.rejects(within(runner.runTurn(turn(agent)), 5_000), /did not answer initialize/);
    } finally {
      await runner.close();
    }
    const stderr = text().split('\n').filter((line) => line.includes('"agent stderr"')).map((line) => JSON.parse(line).stderr as string);
    assert.ok(!stderr.join('').includes(SECRET.slice(0, 6)), 'not even the start of the key, across the cut');
    assert.deepEqual(stderr.map((line) => line.length), [2000, 2000, 'after the long line'.length]);
    assert.equal(stderr[0], `${'x'.repeat(1990)}[redacted]`);
    assert.equal(stderr[2], 'after the long line');
  });

  it('splits lines itself, dropping what passes the cap before a newline comes', () => {
    const lines: string[] = [];
    const split = lineSplitter((line) => lines.push(line), 8);
    split.push('abc');
    split.push('defghijklmnop');
    split.push('qrs\r\nshort\nlast');
    split.end();
    assert.deepEqual(lines, ['abcdefgh', 'short', 'last']);
    const big: string[] = [];
    const capped = lineSplitter((line) => big.push(line));
    for (let i = 0; i < 10; i++) capped.push('z'.repeat(MAX_STDERR_LINE));
    capped.push('\n');
    assert.deepEqual(big.map((line) => line.length), [MAX_STDERR_LINE]);
  });
});
