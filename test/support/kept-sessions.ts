import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fixtureWorld } from './fixture-world.ts';
import { startService, type TestService } from './service.ts';

/**
 * A service on memory storage over the fixture world, whose demo `claude` agent keeps its sessions in a directory of
 * the test's and so offers `session/resume` and `session/fork`, as Claude Code does; what it offers is known.
 */
export async function serviceKeepingSessions(): Promise<TestService> {
  const storage = createMemoryStorage();
  const world = fixtureWorld();
  const dir = mkdtempSync(join(tmpdir(), 'demo-sessions-'));
  await storage.importWorld({ ...world, agents: world.agents.map((a) => (a.id === 'claude' ? { ...a, env: { DEMO_AGENT_RESUME: dir } } : a)) });
  const service = await startService({}, { storage });
  await service.knowOffers();
  return service;
}
