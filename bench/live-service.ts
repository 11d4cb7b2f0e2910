import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAcpAgentRunner } from '../adapters/acp/agent-runner.ts';
import { fail } from '../domain/result.ts';
import type { AgentOffers } from '../ports/agent-offers.ts';
import type { AgentRunner } from '../ports/agent-runner.ts';
import type { EventBus } from '../ports/event-bus.ts';
import type { Storage } from '../ports/storage.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logging.ts';
import { attach, createListener, listen, shutdown } from '../src/server.ts';

/** The service as the fan-out benchmark runs it: on loopback, port 0. */
export interface BenchService {
  readonly port: number;
  readonly close: () => Promise<void>;
}

/**
 * The real composition root, as src/main.ts wires its listener: the connection cap comes from
 * MAX_CONNECTIONS (test/support/service.ts keeps the listener's default of 1,024, too few for 10,000
 * sockets). No agent is used; the runner only starts if a turn is started, which never happens here, unless
 * the caller brings its own runner (the schedule-lag benchmark's, which ends each turn at once).
 */
export async function startBenchService(
  env: Record<string, string>,
  storage: Storage,
  bus: EventBus,
  agents?: { readonly runner: AgentRunner; readonly offers: AgentOffers },
): Promise<BenchService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'console-bench-'));
  const configure = (port: number) => {
    const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', PORT: String(port), DATA_DIR: dataDir, ...env });
    if (!loaded.ok) throw new Error(`bad bench config: ${JSON.stringify(loaded.error)}`);
    return loaded.value;
  };
  // Bound first so the origins can name the port, as `npm start` does with its fixed one.
  // Every socket of the bench comes from one address, standing for many clients: no per-client cap.
  const server = createListener({ maxConnections: configure(1).maxConnections, maxConnectionsPerClient: null });
  const port = await listen(server, 0, '127.0.0.1');
  const config = configure(port);
  const log = createLogger(config.logLevel);
  const acp = agents === undefined ? createAcpAgentRunner({ log, env: process.env }) : null;
  const app = createApp({
    config,
    log,
    storage,
    fetchUiResource: async () => fail('no MCP provider in the benchmark'),
    runner: agents?.runner ?? acp!,
    offers: agents?.offers ?? acp!.offers,
    bus,
  });
  attach(server, app);
  return { port, close: () => shutdown(server, app, 1000) };
}
