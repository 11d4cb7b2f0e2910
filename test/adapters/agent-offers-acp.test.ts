import pino from 'pino';
import { createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import type { Agent } from '../../domain/model.ts';
import { agentOffersContract } from '../contracts/agent-offers.contract.ts';
import { builtDemoAgent } from '../support/built.ts';

const agent = (id: string, fields: Partial<Agent> = {}): Agent => ({
  id, models: null, efforts: null, permission_modes: null, default_permission_mode: null, command: null, ...fields,
});

// The bundled demo agent under its two profiles: what they advertise is written out here, as a user would read it.
agentOffersContract('ACP runner against the demo agent', async () => {
  const runner = createAcpAgentRunner({ demoAgent: builtDemoAgent(), log: pino({ level: 'silent' }), env: process.env, offerTimeoutMs: 4_000 });
  return {
    offers: runner.offers,
    working: [
      {
        agent: agent('claude'),
        offer: { modes: ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'], currentMode: 'default', models: ['opus', 'sonnet', 'haiku'], efforts: ['low', 'medium', 'high'], steering: true },
      },
      {
        agent: agent('codex', { env: { DEMO_AGENT_PROFILE: 'codex' } }),
        offer: { modes: ['read-only', 'auto', 'full-access'], currentMode: 'read-only', models: ['gpt-5-codex', 'gpt-5'], efforts: ['low', 'medium', 'high'], steering: false },
      },
    ],
    broken: agent('ghost', { command: ['/nonexistent/acp-agent'] }),
    // Starts, reads nothing, answers nothing: `initialize` never returns.
    silent: agent('mute', { command: ['sleep', '60'] }),
    // Wide enough for the demo agent (TypeScript through tsx) to start on a busy two-core machine.
    boundMs: 4_000,
    close: () => runner.close(),
  };
});
