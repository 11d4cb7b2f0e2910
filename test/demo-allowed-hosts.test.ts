import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFetchUiResource } from '../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { loadConfig } from '../src/config.ts';
import { demoProviderMount } from '../src/demo/provider-mount.ts';
import { demoProviderFetch } from '../src/demo/provider-url.ts';
import { DEMO_MCP_PATH, DEMO_WORLD } from '../src/open-storage.ts';
import { loadWorldFile } from '../src/world/load.ts';
import { startService, type TestService } from './support/service.ts';

const DEMO_ARTIFACT = '01a1fd37-cdcc-7c02-8a30-31d9bdf0bd97';

// The demo's artifact loads call the bundled provider at 127.0.0.1:<port>, through the service's own
// edge: an ALLOWED_HOSTS that replaced the loopback names refused that call 421, and every load was 502.
describe('demo mode with ALLOWED_HOSTS set', () => {
  let service: TestService;
  before(async () => {
    const world = await loadWorldFile(DEMO_WORLD);
    assert.ok(world.ok);
    const storage = createMemoryStorage();
    await storage.importWorld(world.value);
    // Wired as src/main.ts wires demo mode; the port is the one listened on, known once it listens.
    let port = 0;
    service = await startService(
      { ALLOWED_HOSTS: 'console.example.com:8443' },
      {
        storage,
        fetchUiResource: demoProviderFetch(createFetchUiResource(), () => port),
        mounts: [demoProviderMount(DEMO_MCP_PATH)],
      },
    );
    port = service.port;
    assert.equal(service.config.demo, true);
  });
  after(() => service.close());

  it('still loads the demo artifact from its bundled provider', async () => {
    const res = await service.ask({
      path: `/api/artifacts/${DEMO_ARTIFACT}`,
      headers: { host: 'console.example.com:8443', authorization: 'Bearer dev-alice' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json().resource.mimeType, 'text/html;profile=mcp-app');
  });

  it('answers 127.0.0.1 only at the port listened on beyond the list, and no other loopback name', async () => {
    const loopback = await service.ask({ path: '/healthz', headers: { host: `127.0.0.1:${service.port}` } });
    assert.equal(loopback.status, 200, loopback.text);
    for (const host of [`[::1]:${service.port}`, `127.0.0.1:${service.port === 1 ? 2 : 1}`, 'evil.example']) {
      const res = await service.ask({ path: '/healthz', headers: { host } });
      assert.equal(res.status, 421, `${host}: ${res.text}`);
    }
  });
});

describe('the allowed hosts of demo mode', () => {
  it('add 127.0.0.1 at the port listened on to ALLOWED_HOSTS, and only in demo mode', () => {
    const hosts = (env: Record<string, string>) => {
      const loaded = loadConfig({ PORT: '8080', ...env });
      assert.ok(loaded.ok);
      return loaded.value.allowedHosts;
    };
    assert.deepEqual(hosts({ ALLOWED_HOSTS: '', ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: '' }), [{ host: '127.0.0.1', port: 0 }]);
    assert.deepEqual(hosts({ CONSOLE_WORLD: 'world.json', ALLOWED_HOSTS: '', ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: '' }), []);
    assert.deepEqual(hosts({ DATABASE_URL: 'postgres://u@db:5432/x', ALLOWED_HOSTS: '', ARTIFACT_SANDBOX_ORIGIN: '', ARTIFACT_VIEWER_ORIGIN: '' }), []);
  });
});
