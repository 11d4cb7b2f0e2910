import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { sameAgentProcess } from '../../domain/agent-env.ts';

// Small alphabets, so that equal and nearly equal agents are drawn often.
const word = fc.constantFrom('a', 'b', 'node', '');
const agentArb = fc.record(
  {
    id: fc.constantFrom('claude', 'codex'),
    command: fc.option(fc.array(word, { maxLength: 3 }), { nil: null }),
    env: fc.dictionary(fc.constantFrom('HOME', 'MODE', 'X'), word, { maxKeys: 3 }),
    env_pass: fc.array(fc.constantFrom('KEY', 'TOKEN'), { maxLength: 2 }),
  },
  { requiredKeys: ['id', 'command'] },
);
/** The process an agent starts, written out canonically: env's keys sorted, absent lists as empty. */
const canonical = (agent: { id: string; command: string[] | null; env?: Record<string, string>; env_pass?: string[] }) =>
  JSON.stringify([agent.id, agent.command, agent.env_pass ?? [], Object.entries(agent.env ?? {}).sort(([x], [y]) => (x < y ? -1 : 1))]);

describe('sameAgentProcess', () => {
  it('property: the same process exactly when the id, the command, env_pass and the env (in any key order) are equal', () => {
    fc.assert(fc.property(agentArb, agentArb, (a, b) => {
      assert.equal(sameAgentProcess(a, b), canonical(a) === canonical(b));
      assert.equal(sameAgentProcess(a, b), sameAgentProcess(b, a));
    }), { numRuns: 2_000 });
  });

  it('property: an agent is the same process as itself with its env keys reordered, and models or modes do not matter', () => {
    fc.assert(fc.property(agentArb, (a) => {
      const reordered = { ...a, env: Object.fromEntries(Object.entries(a.env ?? {}).reverse()), models: ['m'], permission_modes: ['plan'] };
      assert.ok(sameAgentProcess(a, reordered));
    }));
  });

  it('tells a null command (the bundled demo agent) from an empty one', () => {
    assert.equal(sameAgentProcess({ id: 'a', command: null }, { id: 'a', command: [] }), false);
    assert.equal(sameAgentProcess({ id: 'a', command: null, env_pass: [] }, { id: 'a', command: null }), true);
  });

  it('tells a network of none from the host\'s (absent is the host\'s): a sandbox is made at the start', () => {
    assert.equal(sameAgentProcess({ id: 'a', command: null, network: 'none' }, { id: 'a', command: null }), false);
    assert.equal(sameAgentProcess({ id: 'a', command: null, network: 'host' }, { id: 'a', command: null }), true);
  });
});
