import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { createAcpAgentRunner } from '../adapters/acp/agent-runner.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { fail } from '../domain/result.ts';
import { createApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { createLogger } from '../src/logging.ts';
import { attach, createListener, listen, shutdown } from '../src/server.ts';
import type { FetchUiResource } from '../ports/mcp-resource.ts';
import type { Storage } from '../ports/storage.ts';

/** The service under load, in this process, on a loopback port. */
export interface BenchService {
  readonly port: number;
  readonly close: () => Promise<void>;
}

/**
 * The real composition root over `storage`, logging as `npm start` does (the default level, every line
 * formatted) into a sink that drops the bytes: the terminal's cost is no part of the service's. Its MCP
 * fetches fail unless `fetchUiResource` is given.
 */
export async function startBenchService(storage: Storage, fetchUiResource?: FetchUiResource): Promise<BenchService> {
  // The load comes from one address, standing for many clients: no per-client cap.
  const server = createListener({ maxConnectionsPerClient: null });
  const port = await listen(server, 0, '127.0.0.1');
  const loaded = loadConfig({ CONSOLE_STORAGE: 'memory', PORT: String(port), DATA_DIR: mkdtempSync(join(tmpdir(), 'console-bench-')), TURN_LEASE_MS: '3600000', ...(process.env.BENCH_LOG_LEVEL ? { LOG_LEVEL: process.env.BENCH_LOG_LEVEL } : {}) });
  if (!loaded.ok) throw new Error(`bad bench config: ${JSON.stringify(loaded.error)}`);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const log = createLogger(loaded.value.logLevel, sink);
  const runner = createAcpAgentRunner({ log, env: process.env });
  const app = createApp({
    config: loaded.value,
    log,
    storage,
    fetchUiResource: fetchUiResource ?? (async () => fail('no MCP provider in the bench')),
    runner,
    offers: runner.offers,
    bus: createMemoryEventBus(),
  });
  attach(server, app);
  return { port, close: () => shutdown(server, app, 1000) };
}
