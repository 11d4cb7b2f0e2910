import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import { createLogger } from '../../src/logging.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';
import { builtDemoAgent } from '../support/built.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const DB_SECRET = 'db-password-never-in-an-agent';
const PASSED = 'passed-api-key-value';

/** The text of the assistant's ledger messages, in order. */
const replyOf = (events: readonly WireEvent[]) =>
  events.filter((e) => e.type === 'message' && (e.data.message as { role?: string } | undefined)?.role === 'assistant')
    .map((e) => (e.data.message as { text: string }).text).join('');

describe("an agent's environment, through the service", () => {
  let service: TestService;
  const runnerLogs: string[] = [];

  before(async () => {
    const world = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      agents: world.agents.map((a) => (a.id === 'claude' ? { ...a, env: { AGENT_LITERAL: 'literal' }, env_pass: ['AGENT_PASSED', 'AGENT_ABSENT'] } : a)),
    });
    // The service's own environment, as the composition root would pass process.env: a database URL
    // with its password, a pass-through secret, and variables no agent asked for.
    const serviceEnv = {
      PATH: process.env.PATH,
      HOME: '/home/console',
      LC_ALL: 'C.UTF-8',
      DATABASE_URL: `postgres://console:${DB_SECRET}@127.0.0.1:1/console`,
      AGENT_PASSED: PASSED,
      NODE_OPTIONS: '--max-old-space-size=64',
      CONSOLE_STORAGE: 'postgres',
    };
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (runnerLogs.push(chunk.toString('utf8')), done()) });
    service = await startService({}, { storage, runner: createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: createLogger('debug', sink), env: serviceEnv }) });
  });
  after(() => service.close());

  it('holds PATH, HOME, LC_*, its env literal and its env_pass variable, and no DATABASE_URL', async () => {
    const key = randomUUID();
    const socket = await connectLive(service.port, { thread: key, after: '0' });
    assert.ok(!('refused' in socket));
    const live = socket as LiveClient;
    const res = await service.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Which variables? [env]', model: 'claude:opus' }) });
    assert.equal(res.status, 202, `${res.text} ${JSON.stringify(service.logs.filter((l) => (l.level as number) >= 50))}`);
    const events = await live.until((list) => list.some((e) => e.type === 'reflex_asleep'));
    live.close();
    const line = /\[demo-env\] ([^\n]*)/.exec(replyOf(events));
    assert.ok(line, `no [demo-env] line in: ${replyOf(events)}`);
    const names = line[1]!.split(',');
    assert.ok(!names.includes('DATABASE_URL'), `the agent got DATABASE_URL: ${names.join(',')}`);
    assert.ok(!names.includes('NODE_OPTIONS') && !names.includes('CONSOLE_STORAGE'), names.join(','));
    for (const expected of ['PATH', 'HOME', 'LC_ALL', 'AGENT_LITERAL', 'AGENT_PASSED']) assert.ok(names.includes(expected), `${expected} missing: ${names.join(',')}`);
    assert.ok(!names.includes('AGENT_ABSENT'));
    // Only names reach the log: a missing env_pass name is reported, values never are.
    const logged = runnerLogs.join('') + JSON.stringify(service.logs);
    assert.match(logged, /AGENT_ABSENT/);
    assert.ok(!logged.includes(PASSED) && !logged.includes(DB_SECRET));
  });
});
