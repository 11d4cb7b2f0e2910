// The start's warm of the agents (readiness waits for it), with nothing of Node (runs under Deno, Bun
// and Chromium too: npm run test:runtimes).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentsOnChannels, agentVocabularies } from '../../core/agents/vocabularies.ts';
import type { Agent, Channel } from '../../domain/model.ts';

const agent = (id: string): Agent => ({ id, models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null });
const channel = (id: string, agents: string[]) => ({ id, agents }) as unknown as Channel;

describe('warming the agents at start', () => {
  it('asks only the agents on a channel, each once', async () => {
    const asked: string[] = [];
    const vocabularies = agentVocabularies(
      { agents: async () => [agent('a'), agent('b'), agent('c')], channels: async () => [channel('console', ['a', 'c']), channel('chat', ['c'])] },
      async (asking) => (asked.push(asking.id), { kind: 'unknown' }),
    );
    await vocabularies.warm();
    assert.deepEqual(asked.sort(), ['a', 'c']);
    assert.deepEqual(agentsOnChannels([channel('x', ['b'])], [agent('a'), agent('b')]).map((a) => a.id), ['b']);
  });

  it('reads the channels and the agents together, not one after the other (on a start, each waits behind the housekeeping statements)', async () => {
    // The channels answer only once the agents have been asked for: a warm that reads them in turn never ends.
    let agentsAsked!: () => void;
    const agentsRead = new Promise<void>((resolve) => (agentsAsked = resolve));
    const vocabularies = agentVocabularies(
      {
        agents: async () => (agentsAsked(), [agent('a')]),
        channels: async () => (await agentsRead, [channel('console', ['a'])]),
      },
      async () => ({ kind: 'unknown' }),
    );
    const outcome = await Promise.race([vocabularies.warm().then(() => 'warmed'), new Promise((resolve) => setTimeout(resolve, 1_000, 'stuck'))]);
    assert.equal(outcome, 'warmed');
  });
});
