import type { ChatInbound } from '../../core/channels/inbound.ts';
import type { ChatHandlers } from '../../ports/chat-inbound.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { type AcpAgentRunner, createAcpAgentRunner } from '../../adapters/acp/agent-runner.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { fail } from '../../domain/result.ts';
import type { AgentOffers } from '../../ports/agent-offers.ts';
import { createApp, type AppOptions } from '../../src/app.ts';
import { createLogger } from '../../src/logging.ts';
import { loadConfig, type Config } from '../../src/config.ts';
import { attach, connectionCounts, createListener, listen, shutdown } from '../../src/server.ts';
import { fixtureWorld } from './fixture-world.ts';
import { ask, type Answer, type Ask } from './http.ts';
import { builtDemoAgent } from './built.ts';

/** A running service on an ephemeral port, with its log lines kept for assertions. */
export interface TestService {
  readonly port: number;
  readonly config: Config;
  /** `http://localhost:<port>`, the default console origin. */
  readonly consoleOrigin: string;
  /** `http://sandbox.localhost:<port>` unless the env names another. */
  readonly sandboxOrigin: string | null;
  readonly logs: Record<string, unknown>[];
  readonly ask: (request: Ask) => Promise<Answer>;
  /**
   * Waits until what every agent of the world offers is known (or it is known to be unavailable):
   * reads never wait on an agent, so a test that reads routes or postures first calls this.
   */
  readonly knowOffers: () => Promise<void>;
  /** What a chat channel's adapter calls with a person's message (core/channels/inbound.ts). */
  readonly receiveChat: ChatInbound;
  /** What the app hands a chat channel's adapter (`listen`). */
  readonly chat: ChatHandlers;
  readonly close: () => Promise<void>;
}

/**
 * Starts the real composition root on port 0. The port is bound first so the default origins can
 * name it, as `npm start` does with its fixed port. `env` takes the contract's variables.
 */
export async function startService(
  env: Record<string, string> = {},
  extra: Partial<Omit<AppOptions, 'config' | 'log'>> = {},
): Promise<TestService> {
  // The listener's caps come from the configuration, as src/main.ts wires them (the port is not known yet: 0 will do).
  const early = loadConfig({ CONSOLE_STORAGE: 'memory', ...env, PORT: '0' });
  if (!early.ok) throw new Error(`bad test config: ${JSON.stringify(early.error)}`);
  const cap = { maxConnections: early.value.maxConnections, maxConnectionsPerClient: early.value.maxConnectionsPerClient };
  const server = createListener(cap);
  const port = await listen(server, 0, '127.0.0.1');
  // Whatever fails from here (a build that failed, a bad configuration) closes the listener: a test that fails
  // must not leave it open, holding its process alive.
  try {
    // Runs create their project directories under DATA_DIR: a temporary one, never the repository's.
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', PORT: String(port), DATA_DIR: mkdtempSync(join(tmpdir(), 'console-test-')), ...env });
    if (!loaded.ok) throw new Error(`bad test config: ${JSON.stringify(loaded.error)}`);
    const logs: Record<string, unknown>[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n')) if (line.trim() !== '') logs.push(JSON.parse(line));
        done();
      },
    });
    const log = createLogger('debug', sink);
    // The real runner: the bundled demo agent starts when a test first needs what an agent offers, or starts a run.
    const runner = extra.runner ?? createAcpAgentRunner({ demoAgent: builtDemoAgent(), log, env: process.env });
    const storage = extra.storage ?? createMemoryStorage();
    // A runner the test brings answers offers too when it is the ACP one.
    const offers: AgentOffers = extra.offers ?? ('offers' in runner ? (runner as AcpAgentRunner).offers : async () => ({ kind: 'unknown' }));
    const app = createApp({
      config: loaded.value,
      log,
      storage,
      // No provider unless a test brings one: a load that reaches here is a 502, and says so in the log.
      fetchUiResource: async () => fail('no MCP provider in this test'),
      runner,
      offers,
      bus: createMemoryEventBus(),
      connections: connectionCounts(server),
      ...extra,
    });
    attach(server, app, log);
    return {
      port,
      config: loaded.value,
      consoleOrigin: `http://localhost:${port}`,
      sandboxOrigin: loaded.value.sandboxOrigin,
      logs,
      ask: (request) => ask(port, request),
      knowOffers: async () => {
        await Promise.all((await storage.catalog.agents()).map((agent) => offers(agent, { wait: true })));
      },
      receiveChat: app.receiveChat,
      chat: app.chat,
      close: () => shutdown(server, app, 1000),
    };
  } catch (error) {
    server.close();
    throw error;
  }
}

/** A service over memory storage holding the fixture world (two users, forks, runs, pending items). */
export async function startFixtureService(env: Record<string, string> = {}): Promise<TestService> {
  const storage = createMemoryStorage();
  await storage.importWorld(fixtureWorld());
  return startService(env, { storage });
}
