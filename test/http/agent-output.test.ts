import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { WireEvent } from '../../domain/events.ts';
import { MAX_STORED_STRING, MAX_STORED_VALUE } from '../../domain/bounds.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };
const SECRET = 'sk-live-0123456789abcdef';
const PASSED = 'pw-passed-through-9876';
const asleep = (events: readonly WireEvent[]) => events.some((e) => e.type === 'reflex_asleep');

/** What an agent prints is stored and broadcast: never its secrets, never without bounds. */
describe('agent output: secrets hidden, size bounded', () => {
  let service: TestService;
  before(async () => {
    const world = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      agents: world.agents.map((agent) => (agent.id === 'claude' ? { ...agent, env: { DEMO_LEAK_KEY: SECRET }, env_pass: ['DEMO_PASSED_KEY'] } : agent)),
    });
    service = await startService({}, { storage });
  });
  after(() => service.close());

  const run = async (text: string) => {
    const key = randomUUID();
    const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
    const res = await service.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text, model: 'claude:opus' }) });
    assert.equal(res.status, 202, res.text);
    const events = await socket.until(asleep);
    socket.close();
    return { events, thread: res.json().thread_id as string };
  };

  it('an agent printing its environment does not show its env_pass value, in events or in the ledger; its configuration may show', async () => {
    process.env.DEMO_PASSED_KEY = PASSED;
    const { events, thread } = await run('Show me [leak]');
    const wire = JSON.stringify(events);
    assert.ok(wire.includes('[demo-leak]'), 'the agent did print its environment');
    assert.ok(wire.includes('[redacted]'));
    assert.ok(!wire.includes(PASSED), 'the passed secret on the live socket');
    assert.ok(wire.includes(SECRET), 'a literal env value is configuration, not hidden');
    const ledger = (await service.ask({ path: `/api/console/threads/${thread}/messages`, headers: ALICE })).text;
    assert.ok(!ledger.includes(PASSED), 'the passed secret in the ledger');
    assert.ok(!JSON.stringify(service.logs).includes(PASSED));
  });

  it('a tool call of megabytes is stored bounded: long strings cut with a marker, the bulkiest parts dropped when still too large', async () => {
    const { events } = await run('Read it all [big]');
    const big = events.find((e) => e.type === 'tool_call' && String(e.data.id).startsWith('big-'))!;
    assert.ok(big, events.map((e) => e.type).join(', '));
    assert.ok(JSON.stringify(big.data).length <= MAX_STORED_VALUE + 1000, `stored ${JSON.stringify(big.data).length} characters`);
    const diff = (big.data.content as { newText: string }[] | undefined)?.[0]?.newText;
    if (diff !== undefined) {
      assert.ok(diff.length < MAX_STORED_STRING + 100);
      assert.match(diff, /characters cut\]$/);
    }
    const output = (big.data.rawOutput as { stdout: string } | undefined)?.stdout;
    assert.ok(output === undefined || output.length < MAX_STORED_STRING + 100);
    assert.equal(events.at(-2)!.type, 'run_finished');
  });
});
