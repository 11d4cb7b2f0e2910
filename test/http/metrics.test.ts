import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { connectLive, type LiveClient } from '../support/live-client.ts';
import { startMcpServer, type TestMcpServer } from '../support/mcp-server.ts';
import { startFixtureService, startService, type TestService } from '../support/service.ts';
import { waitFor } from '../support/wait-for.ts';

const TOKEN = 'metrics-token-0123456789';
const ALICE = { authorization: 'Bearer token-alice', 'content-type': 'application/json' };

/** The value of one sample of Prometheus text (`name{labels} value`), 0 when absent. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$/.exec(line);
    if (match === null || match[1] !== name) continue;
    const found = Object.fromEntries([...(match[3] ?? '').matchAll(/([a-zA-Z_]+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => found[k] === v)) return Number(match[4]);
  }
  return 0;
}

/** A scrape of /metrics from 127.0.0.2 (another client than the service's `ask`), on `agent`'s connection. */
function scrapeFrom(port: number, agent: Agent): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/metrics', localAddress: '127.0.0.2', agent, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve(text));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('GET /metrics', () => {
  it('is 404 without METRICS_TOKEN: never public by default', async () => {
    const service = await startFixtureService();
    try {
      const res = await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 404);
    } finally {
      await service.close();
    }
  });

  it('refuses a token that is too short to be one (exit-worthy configuration)', async () => {
    const { loadConfig } = await import('../../src/config.ts');
    const loaded = loadConfig({ METRICS_TOKEN: 'short' });
    assert.equal(loaded.ok, false);
    assert.equal(!loaded.ok && loaded.error[0]?.path, 'METRICS_TOKEN');
  });

  it('counts the connections refused past a client\'s cap, and those open', { timeout: 15_000 }, async () => {
    const service = await startFixtureService({ METRICS_TOKEN: TOKEN, MAX_CONNECTIONS_PER_CLIENT: '2' });
    const sockets: Socket[] = [];
    const watcher = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      for (let i = 0; i < 3; i += 1) {
        const socket = connect(service.port, '127.0.0.1');
        socket.on('error', () => {});
        socket.resume();
        await once(socket, 'connect');
        sockets.push(socket);
      }
      // The third is refused (and closed); one of the two held makes room for the scrape.
      await once(sockets[2]!, 'close');
      sockets[0]!.destroy();
      // Another client watches, on one kept-alive connection, until the service has seen that one closed.
      const open = async () => sample(await scrapeFrom(service.port, watcher), 'console_connections_open');
      await waitFor(async () => (await open()) === 2, { what: 'the service to see a held connection closed (the one left and the watcher)' });
      const res = await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(sample(res.text, 'console_connections_refused', { cap: 'client' }), 1);
      assert.equal(sample(res.text, 'console_connections_refused', { cap: 'global' }), 0);
      assert.equal(sample(res.text, 'console_connections_open'), 3, 'the one held, the watcher and the scrape');
    } finally {
      watcher.destroy();
      for (const socket of sockets) socket.destroy();
      await service.close();
    }
  });

  describe('with METRICS_TOKEN', () => {
    let service: TestService;
    let provider: TestMcpServer;

    before(async () => {
      provider = await startMcpServer({ resource: { uri: 'ui://weather/card', text: '<!DOCTYPE html><p>hi</p>' } });
      const world = fixtureWorld();
      const storage = createMemoryStorage();
      await storage.importWorld({ ...world, installations: world.installations.map((i) => (i.id === F.installation ? { ...i, server_url: provider.url } : i)) });
      service = await startService({ METRICS_TOKEN: TOKEN }, { storage, fetchUiResource: createFetchUiResource() });
    });
    after(async () => {
      await service.close();
      await provider.close();
    });

    const scrape = async (): Promise<string> => {
      const res = await service.ask({ path: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(res.status, 200);
      assert.match(String(res.headers['content-type']), /^text\/plain/);
      assert.equal(res.headers['cache-control'], 'no-store');
      return res.text;
    };

    it('answers 401 to no token or another one, and 404 on the sandbox origin', async () => {
      for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong-token-0123456789' }, { authorization: TOKEN }, { authorization: 'Bearer token-alice' }]) {
        const res = await service.ask({ path: '/metrics', headers });
        assert.equal(res.status, 401);
        assert.equal(res.headers['www-authenticate'], 'Bearer');
      }
      const onSandbox = await service.ask({ path: '/metrics', headers: { host: `sandbox.localhost:${service.port}`, authorization: `Bearer ${TOKEN}` } });
      assert.equal(onSandbox.status, 404);
    });

    it('moves each figure after a directive, an artifact load and a live socket', async () => {
      const before = await scrape();
      const key = randomUUID();
      const socket = (await connectLive(service.port, { thread: key, after: '0' })) as LiveClient;
      const during = await scrape();
      assert.equal(sample(during, 'console_live_sockets_open') - sample(before, 'console_live_sockets_open'), 1);

      const directive = await service.ask({ method: 'POST', path: `/api/console/threads/${key}/directives`, headers: ALICE, body: JSON.stringify({ text: 'Hello', model: 'claude:opus' }) });
      assert.equal(directive.status, 202, directive.text);
      await socket.until((events) => events.some((e) => e.type === 'reflex_asleep'));
      const load = await service.ask({ path: `/api/artifacts/${F.artifact}`, headers: { authorization: 'Bearer token-alice' } });
      assert.equal(load.status, 200, load.text);
      socket.close();
      await socket.closed;
      // The server sees the close a moment after the client.
      let after = await scrape();
      for (let i = 0; i < 50 && sample(after, 'console_live_sockets_open') !== sample(before, 'console_live_sockets_open'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        after = await scrape();
      }

      const route = (r: string, method: string, status: string) => ({ route: r, method, status });
      const moved = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
      assert.equal(moved('console_http_requests_total', route('/api/console/threads/:thread/directives', 'POST', '202')), 1);
      assert.equal(moved('console_http_requests_total', route('/api/artifacts/:artifact_id', 'GET', '200')), 1);
      assert.ok(moved('console_http_request_duration_seconds_count', { route: '/api/artifacts/:artifact_id', method: 'GET' }) >= 1);
      assert.equal(moved('console_runs_total', { status: 'succeeded' }), 1);
      assert.equal(moved('console_run_duration_seconds_count', { status: 'succeeded' }), 1);
      assert.equal(moved('console_mcp_fetches_total', { outcome: 'ok' }), 1);
      assert.equal(moved('console_mcp_fetch_duration_seconds_count', { outcome: 'ok' }), 1);
      assert.equal(sample(after, 'console_live_sockets_open'), sample(before, 'console_live_sockets_open'), 'the socket is counted out when it closes');
      assert.ok(sample(after, 'console_agent_processes') >= 1, 'the demo agent process is alive');
      assert.match(after, /^console_pending_waits 0$/m);
      assert.match(after, /^console_bus_reconnects_total 0$/m);
      assert.match(after, /^console_storage_unavailable_total 0$/m);
      // A scrape is counted too, but no label carries a path a client chose.
      assert.ok(!after.includes(key), 'no label carries a path');
    });
  });
});
