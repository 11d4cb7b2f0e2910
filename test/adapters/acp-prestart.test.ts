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
import type { TurnUpdate } from '../../ports/agent-runner.ts';
import { builtDemoAgent } from '../support/built.ts';

// A start spawns its world's agents while the database opens (src/main.ts); the runner takes such a
// process for the catalog's agent only when it is the same process, and ends the ones nothing takes.

const log = pino({ level: 'silent' });
const demo: Agent = { id: 'demo', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null };
const AGENT = builtDemoAgent()[1]!;

let scratch: string;
let pids: string;
/** The demo agent behind a shell that writes its pid (kept by `exec`) to a file before it starts. */
const recorded = () => ['sh', '-c', `echo $$ >> '${pids}'; exec "$0" "$@"`, process.execPath, AGENT];
// None yet until the shell has run: a loaded machine reads the file before it exists.
const started = (): number[] => (existsSync(pids) ? readFileSync(pids, 'utf8').split('\n').filter(Boolean).map(Number) : []);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function until(check: () => boolean, what: string, ms = 15_000): Promise<void> {
  for (const end = Date.now() + ms; !check(); await sleep(25)) if (Date.now() > end) assert.fail(`not ${what} within ${ms} ms`);
}
/** One turn; answers the pid the demo agent names in its closing line. */
async function turnPid(runner: ReturnType<typeof createAcpAgentRunner>, agent: Agent): Promise<number> {
  const texts: string[] = [];
  await runner.runTurn({
    agent, sessionId: null, cwd: join(scratch, 'work'), prompt: 'hello', mode: null, model: null, effort: null,
    onPermission: async () => ({ outcome: 'selected', optionId: 'allow' }),
    onSession: async () => {},
    onUpdate: async (update: TurnUpdate) => void (update.kind === 'text' && texts.push(update.text)),
  });
  const match = /pid=(\d+)/.exec(texts.join(''));
  assert.ok(match, 'the demo agent names its pid');
  return Number(match[1]);
}

describe('agents started ahead of the catalog (prestart)', { timeout: 90_000 }, () => {
  before(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'acp-prestart-'));
  });
  after(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  it('a turn of the same agent takes the process started ahead: one process, no restart', async () => {
    pids = join(scratch, 'same.pids');
    const runner = createAcpAgentRunner({ log, demoAgent: recorded(), env: process.env });
    try {
      runner.prestart([demo]);
      await until(() => started().length === 1, 'spawned ahead');
      const pid = await turnPid(runner, demo);
      assert.deepEqual(started(), [pid]);
      assert.deepEqual(runner.stats(), { alive: 1, restarts: 0 });
      // A second prestart of a running agent starts nothing.
      runner.prestart([demo]);
      assert.equal(await turnPid(runner, demo), pid);
      assert.deepEqual(started(), [pid]);
    } finally {
      await runner.close();
    }
  });

  it('an agent of that id that starts another process (other env) gets its own, and the one started ahead is ended', async () => {
    pids = join(scratch, 'other.pids');
    const runner = createAcpAgentRunner({ log, demoAgent: recorded(), env: process.env });
    try {
      runner.prestart([{ ...demo, env: { DEMO_FLAVOUR: 'world-file' } }]);
      await until(() => started().length === 1, 'spawned ahead');
      const [early] = started();
      const pid = await turnPid(runner, { ...demo, env: { DEMO_FLAVOUR: 'catalog' } });
      assert.notEqual(pid, early);
      assert.deepEqual(started(), [early, pid]);
      await until(() => !alive(early!), 'the early process ended');
    } finally {
      await runner.close();
    }
  });

  it('a process nothing takes is ended once the hold has passed, and close ends one still held', async () => {
    pids = join(scratch, 'hold.pids');
    const runner = createAcpAgentRunner({ log, demoAgent: recorded(), env: process.env, prestartHoldMs: 300 });
    try {
      runner.prestart([demo]);
      await until(() => started().length === 1, 'spawned ahead');
      await until(() => !alive(started()[0]!), 'ended after the hold');
      // Taken by no one, it is not the agent's process: the next turn starts a fresh one.
      const pid = await turnPid(runner, demo);
      assert.equal(started().length, 2);
      assert.equal(pid, started()[1]);
    } finally {
      await runner.close();
    }
    pids = join(scratch, 'close.pids');
    const held = createAcpAgentRunner({ log, demoAgent: recorded(), env: process.env });
    held.prestart([demo]);
    await until(() => started().length === 1, 'spawned ahead');
    await held.close();
    assert.equal(alive(started()[0]!), false, 'close ended the process started ahead');
  });
});
