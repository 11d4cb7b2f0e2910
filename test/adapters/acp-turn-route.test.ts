import assert from 'node:assert/strict';
import { it } from 'node:test';
import type * as acp from '@agentclientprotocol/sdk';
import { redactor, unredacted } from '../../adapters/acp/agent-diagnostics.ts';
import { openTurnRoute } from '../../adapters/acp/turn-route.ts';
import type { TurnUpdate } from '../../ports/agent-runner.ts';
import { createLogger } from '../../src/logging.ts';

const toolCall = (rawInput: Record<string, unknown>): acp.SessionUpdate =>
  ({ sessionUpdate: 'tool_call', toolCallId: 'call-1', title: 'Run', rawInput }) as acp.SessionUpdate;

/** The updates a route delivers, in order. */
async function delivered(redact: ((text: string) => string) | undefined, update: acp.SessionUpdate): Promise<TurnUpdate[]> {
  const got: TurnUpdate[] = [];
  const route = openTurnRoute({ onUpdate: async (u) => void got.push(u), onPermission: async () => ({ outcome: 'cancelled' }) as never }, createLogger('fatal'), redact);
  route.update(update);
  await route.settle();
  return got;
}

it('an agent with no secrets has the one unredacted redactor', () => {
  assert.equal(redactor([]), unredacted);
  assert.equal(redactor(['']), unredacted);
  assert.notEqual(redactor(['s3cret']), unredacted);
});

it("an agent with no secrets: its updates are passed on as mapped, not copied string by string (issue 28: a turn's CPU)", async () => {
  const rawInput = { command: 'ls', nested: { list: ['a'] } };
  for (const redact of [undefined, redactor([])]) {
    const [update] = await delivered(redact, toolCall(rawInput));
    assert.ok(update?.kind === 'tool_call');
    assert.equal(update.call.rawInput, rawInput, 'the same object: no walk over it');
  }
});

it('an agent with secrets: every string of an update has them hidden, keys too', async () => {
  const [update] = await delivered(redactor(['s3cret']), toolCall({ command: 'echo s3cret', s3cret: ['x s3cret'] }));
  assert.ok(update?.kind === 'tool_call');
  assert.deepEqual(update.call.rawInput, { command: 'echo [redacted]', '[redacted]': ['x [redacted]'] });
});

it("the turn's first update holds the agent's input until it is delivered; no later one does, and an ignored one is not counted", async () => {
  const holds: Promise<unknown>[] = [];
  let release!: () => void;
  const first = new Promise<void>((resolve) => (release = resolve));
  const got: TurnUpdate[] = [];
  const route = openTurnRoute(
    { onUpdate: async (u) => { if (got.length === 0) await first; got.push(u); }, onPermission: async () => ({ outcome: 'cancelled' }) as never },
    createLogger('fatal'),
    undefined,
    (until) => holds.push(until),
  );
  // Not delivered at all (nothing of it reaches the console): it holds nothing.
  route.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'image', data: '', mimeType: 'image/png' } });
  assert.equal(holds.length, 0);
  route.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'one' } });
  route.update({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'two' } });
  assert.equal(holds.length, 1, 'one hold, for the first update delivered');
  let held = true;
  void holds[0]!.then(() => (held = false));
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(held, true, 'held while the first is delivered');
  release();
  await route.settle();
  assert.equal(held, false);
  assert.deepEqual(got.map((u) => (u.kind === 'text' ? u.text : u.kind)), ['one', 'two']);
});
