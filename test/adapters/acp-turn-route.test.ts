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
