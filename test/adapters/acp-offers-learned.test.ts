import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import pino from 'pino';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import type { Agent } from '../../domain/model.ts';
import { builtDemoAgent } from '../support/built.ts';

const codex: Agent = {
  id: 'codex', models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null, env: { DEMO_AGENT_PROFILE: 'codex' },
};
const CODEX = { modes: ['read-only', 'auto', 'full-access'], currentMode: 'read-only', models: ['gpt-5-codex', 'gpt-5'], efforts: ['low', 'medium', 'high'], steering: false };

describe('what the agent offers is learned from its probe session only', { timeout: 60_000 }, () => {
  it("a turn's session narrowing its options (config_option_update) does not change what the agent offers", async () => {
    const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), env: process.env });
    const scratch = await mkdtemp(join(tmpdir(), 'acp-offers-learned-'));
    try {
      assert.deepEqual(await runner.offers(codex, { wait: true }), { kind: 'offered', offer: CODEX });
      const options: unknown[] = [];
      await runner.runTurn({
        agent: codex, sessionId: null, cwd: scratch, prompt: '[narrow] pick a model', mode: null, model: null, effort: null,
        onSession: async () => {},
        onUpdate: async (update) => void (update.kind === 'text' ? null : options.push(update)),
        onPermission: async () => ({ outcome: 'cancelled' }),
      });
      // The session narrowed its efforts to `low` (as Codex does for a model); the agent still offers all three.
      assert.deepEqual(await runner.offers(codex), { kind: 'offered', offer: CODEX });
      // A second turn opens another session: what it answers is that session's, not the API's.
      await runner.runTurn({
        agent: codex, sessionId: null, cwd: scratch, prompt: 'hello', mode: 'auto', model: null, effort: null,
        onSession: async () => {}, onUpdate: async () => {}, onPermission: async () => ({ outcome: 'cancelled' }),
      });
      assert.deepEqual(await runner.offers(codex), { kind: 'offered', offer: CODEX });
    } finally {
      await runner.close();
      await rm(scratch, { recursive: true, force: true });
    }
  });
});
