import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createFetchUiResource } from '../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { F, fixtureWorld } from '../test/support/fixture-world.ts';
import { ask } from '../test/support/http.ts';
import { startBare } from './bare-http.ts';
import { startBenchService } from './bench-service.ts';
import { sideBySide, type LoadTool } from './load.ts';
import type { Measured } from './sandbox-side.ts';
import pino from 'pino';

const AUTH = { authorization: 'Bearer token-alice' };
const URI = 'ui://weather/card';
const TIMEOUT_MS = 10_000;

/** The provider in a child process of its own; resolves with its URL and a stop. */
async function startProvider(): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./mcp-provider.ts', import.meta.url).pathname, URI], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = once(child, 'exit');
  const line = await Promise.race([
    (async () => {
      for await (const text of createInterface({ input: child.stdout })) return text;
      throw new Error('the MCP provider printed nothing');
    })(),
    exited.then(() => {
      throw new Error('the MCP provider exited before it served');
    }),
  ]);
  return { url: line.trim(), stop: async () => { child.kill('SIGTERM'); await exited; } };
}

/**
 * The artifact read (`GET /api/artifacts/{id}`: the caller, the artifact and its installation, the
 * rules in order, one MCP fetch of the UI resource, the McpAppView) beside the MCP resource fetch
 * alone: a bare `node:http` server whose every answer is one call of the same fetch adapter against the
 * same provider (connect, list, read), its result as JSON. Memory storage: the read's own storage work
 * is a map lookup, so what is left is the service's work around the fetch.
 */
export async function artifactSideBySide(tool: LoadTool, load: { rounds: number; seconds: number; connections: number }): Promise<Measured> {
  const provider = await startProvider();
  const silent = pino({ level: 'silent' });
  try {
    const world = fixtureWorld();
    const storage = createMemoryStorage();
    await storage.importWorld({
      ...world,
      installations: world.installations.map((i) => (i.id === F.installation ? { ...i, server_url: provider.url } : i)),
    });
    const service = await startBenchService(storage, createFetchUiResource({ log: silent }));
    const fetchAlone = createFetchUiResource({ log: silent });
    const installation = world.installations.find((i) => i.id === F.installation)!;
    const bare = await startBare((_req, res) => {
      fetchAlone({ server_url: provider.url, headers: installation.headers }, URI, { timeoutMs: TIMEOUT_MS }).then((fetched) => {
        const body = JSON.stringify(fetched.ok ? { resource: fetched.value } : { error: fetched.error });
        res.writeHead(fetched.ok ? 200 : 502, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
        res.end(body);
      });
    });
    try {
      const path = `/api/artifacts/${F.artifact}`;
      const answer = await ask(service.port, { path, headers: AUTH });
      if (answer.status !== 200) throw new Error(`the artifact read answered ${answer.status}: ${answer.text}`);
      const alone = await ask(bare.port, { path: '/' });
      if (alone.status !== 200) throw new Error(`the fetch alone answered ${alone.status}: ${alone.text}`);
      const measured = await sideBySide(
        tool,
        { url: `http://127.0.0.1:${service.port}${path}`, headers: AUTH },
        { url: `http://127.0.0.1:${bare.port}/`, headers: {} },
        load,
      );
      return { path: 'artifact read', request: `GET /api/artifacts/{id}, ${answer.text.length} bytes (a resource of ${alone.text.length} bytes fetched over MCP)`, ...measured };
    } finally {
      await bare.close();
      await service.close();
    }
  } finally {
    await provider.stop();
  }
}
