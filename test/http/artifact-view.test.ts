import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import { createMemoryStorage } from '../../adapters/memory/storage.ts';
import type { Installation } from '../../domain/model.ts';
import type { World } from '../../domain/world.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { testId } from '../support/ids.ts';
import { DEFAULT_URI, MCP_APP_MIME, startMcpServer, type McpServerOptions, type TestMcpServer } from '../support/mcp-server.ts';
import { startFixtureService, startService, type TestService } from '../support/service.ts';

const ALICE = { authorization: 'Bearer token-alice' };
const SECRET = 'Bearer provider-secret';
const HTML = '<!DOCTYPE html><html><head><title>card</title></head><body>card</body></html>';
const CSP = { connectDomains: ['https://api.example.com'], resourceDomains: ['https://cdn.example.com'] };

/** One provider per case: each gets its own MCP server, installation and artifact. */
const CASES: Record<string, McpServerOptions> = {
  plain: { resource: { text: HTML } },
  csp: { resource: { text: HTML, itemUi: { csp: CSP, prefersBorder: true } } },
  listOnly: { resource: { text: HTML, listUi: { csp: { connectDomains: ['https://list.example.com'] } } } },
  blob: { resource: { blob: Buffer.from(HTML, 'utf8').toString('base64') } },
  readError: { mode: 'read-error' },
  http500: { mode: 'http-500' },
  garbage: { mode: 'garbage' },
  hang: { mode: 'hang-on-read', resource: { text: HTML } },
  badCsp: { resource: { text: HTML, itemUi: { csp: { connectDomains: 'https://api.example.com' } } } },
  // Unusable entries, a duplicate and upper case: the URL carries what the proxy keeps, in canonical form.
  messyCsp: { resource: { text: HTML, itemUi: { csp: { connectDomains: ['*', 'https:', 'HTTPS://API.example.com/', 'https://api.example.com', "https://x.com; script-src 'unsafe-eval'"], resourceDomains: ['x'.repeat(20_000)] } } } },
  // 500 distinct usable origins: a policy far over the proxy's 16,384 characters.
  hugeCsp: { resource: { text: HTML, itemUi: { csp: { connectDomains: Array.from({ length: 500 }, (_, i) => `https://host-${i}.api.example.com`) } } } },
};
const ids = Object.fromEntries(Object.keys(CASES).map((name, i) => [name, { installation: testId(20_000 + i * 2), artifact: testId(20_001 + i * 2) }]));

/** The fixture world, with every artifact's installation pointing at a live test server. */
function worldWith(servers: Record<string, TestMcpServer>, deadUrl: string): World {
  const base = fixtureWorld();
  const installations: Installation[] = base.installations.map((i) => ({ ...i, server_url: deadUrl }));
  const artifacts = [...base.artifacts];
  for (const [name, server] of Object.entries(servers)) {
    installations.push({ id: ids[name]!.installation, owner: 'alice', provider_name: `Provider ${name}`, server_url: server.url,
      headers: { Authorization: SECRET }, enabled: true, authorized: true });
    artifacts.push({ id: ids[name]!.artifact, owner: 'alice', installation: ids[name]!.installation, resource_uri: DEFAULT_URI,
      title: `App ${name}`, tool: 'show', input: { n: 1 }, output: { content: [{ type: 'text', text: 'ok' }] } });
  }
  return { ...base, installations, artifacts };
}

describe('artifact loading over MCP', () => {
  const servers: Record<string, TestMcpServer> = {};
  let dead: TestMcpServer; // the fixture installations' provider
  let service: TestService;
  let host: string;

  before(async () => {
    for (const [name, options] of Object.entries(CASES)) servers[name] = await startMcpServer(options);
    dead = await startMcpServer({ resource: { uri: 'ui://weather/card', text: HTML } });
    const storage = createMemoryStorage();
    // The fixture's own installations share one provider: a test that must not fetch checks its request count.
    await storage.importWorld(worldWith(servers, dead.url));
    // Long enough for a first fetch on a loaded machine (the SDK's client loaded, a connection made); the hanging provider waits it out.
    service = await startService({ MCP_TIMEOUT_MS: '3000' }, { storage, fetchUiResource: createFetchUiResource() });
    host = `localhost:${service.port}`;
  });
  after(async () => {
    await service.close();
    for (const server of [...Object.values(servers), dead]) await server.close();
  });

  const get = (path: string, headers: Record<string, string> = ALICE) => service.ask({ path, headers: { host, ...headers } });
  const view = (name: string) => get(`/api/artifacts/${ids[name]!.artifact}`);
  const policyOf = (sandboxUrl: string) => JSON.parse(new URL(sandboxUrl).searchParams.get('policy')!);

  it('answers McpAppView: the artifact, the resource fetched afresh, and the sandbox routing', async () => {
    const before = servers.plain!.requests.length;
    const res = await view('plain');
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['artifact', 'resource', 'sandbox_origin', 'sandbox_url', 'viewer_path']);
    assert.deepEqual(body.artifact, {
      id: ids.plain!.artifact, owner: 'alice', installation: ids.plain!.installation, resource_uri: DEFAULT_URI, title: 'App plain',
      tool: 'show', input: { n: 1 }, output: { content: [{ type: 'text', text: 'ok' }] }, created_at: body.artifact.created_at,
    });
    assert.deepEqual(body.resource, { uri: DEFAULT_URI, mimeType: MCP_APP_MIME, text: HTML });
    assert.equal(body.sandbox_origin, `http://sandbox.localhost:${service.port}`);
    assert.equal(
      body.sandbox_url,
      `http://sandbox.localhost:${service.port}/artifacts/sandbox?policy=${encodeURIComponent(JSON.stringify({
        parentOrigin: `http://${host}`, csp: { resourceDomains: [], connectDomains: [], frameDomains: [], baseUriDomains: [] },
      }))}`,
    );
    assert.equal(body.viewer_path, `/artifacts/${ids.plain!.artifact}`);
    assert.ok(!res.text.includes('provider-secret'), 'no credential in the answer');
    const sent = servers.plain!.requests.slice(before);
    assert.ok(sent.some((r) => r.rpc === 'resources/read'), 'fetched afresh');
    assert.ok(sent.every((r) => r.headers.authorization === SECRET), 'the installation credential reached the provider');
    assert.ok(!sent.some((r) => r.rpc === 'tools/call'), 'no tool is executed');
    // Afresh on every call.
    await view('plain');
    assert.ok(servers.plain!.requests.slice(before + sent.length).some((r) => r.rpc === 'resources/read'));
  });

  it('carries the declared CSP at resource.ui.csp and in the sandbox policy', async () => {
    const body = (await view('csp')).json();
    assert.deepEqual(body.resource.ui, { csp: CSP, prefersBorder: true });
    assert.deepEqual(policyOf(body.sandbox_url).csp, { resourceDomains: CSP.resourceDomains, connectDomains: CSP.connectDomains, frameDomains: [], baseUriDomains: [] });
  });

  it('builds sandbox_url from the entries the proxy keeps, canonical and de-duplicated, and the proxy serves it', async () => {
    const body = (await view('messyCsp')).json();
    assert.deepEqual(policyOf(body.sandbox_url).csp, { resourceDomains: [], connectDomains: ['https://api.example.com'], frameDomains: [], baseUriDomains: [] });
    assert.equal(body.resource.ui.csp.connectDomains.length, 5, 'resource.ui is as the provider declared it');
    const url = new URL(body.sandbox_url);
    const page = await service.ask({ path: url.pathname + url.search, headers: { host: url.host } });
    assert.equal(page.status, 200);
  });

  it('502 when the declared CSP would make a sandbox policy over 16,384 characters (a regression: a 200 whose URL the proxy refused)', async () => {
    const res = await view('hugeCsp');
    assert.equal(res.status, 502);
    assert.equal(res.json().detail, 'MCP app resource could not be loaded');
    assert.ok(service.logs.some((l) => l.msg === 'MCP app resource could not be loaded' && String(l.reason).includes('16384')));
  });

  it('takes resource metadata from the list entry when the content item has none', async () => {
    const body = (await view('listOnly')).json();
    assert.deepEqual(body.resource.ui, { csp: { connectDomains: ['https://list.example.com'] } });
    assert.deepEqual(policyOf(body.sandbox_url).csp.connectDomains, ['https://list.example.com']);
  });

  it('decodes a blob resource to text', async () => {
    const body = (await view('blob')).json();
    assert.equal(body.resource.text, HTML);
    assert.equal(body.resource.blob, undefined);
  });

  for (const name of ['readError', 'http500', 'garbage', 'hang', 'badCsp']) {
    it(`502 when the provider fails (${name}), with no upstream detail and no credential`, async () => {
      const res = await view(name);
      assert.equal(res.status, 502);
      assert.equal(res.headers['cache-control'], 'no-store');
      const body = res.json();
      assert.equal(body.detail, 'MCP app resource could not be loaded');
      assert.deepEqual(Object.keys(body).sort(), ['code', 'detail', 'status', 'title', 'type']);
      assert.equal(body.code, 'mcp_resource_failed');
      const logged = service.logs.filter((l) => l.msg === 'MCP app resource could not be loaded');
      assert.ok(logged.length > 0, 'the cause goes to the log');
      assert.ok(!JSON.stringify(service.logs).includes('provider-secret'), 'never the credential');
    });
  }

  it('404 Artifact installation unavailable for a disabled, unauthorized or foreign installation; nothing fetched', async () => {
    const before = dead.requests.length;
    for (const id of [F.artifactDisabled, F.artifactUnauthorized, F.artifactForeignInstallation]) {
      const res = await get(`/api/artifacts/${id}`);
      assert.equal(res.status, 404, id);
      assert.equal(res.json().detail, 'Artifact installation unavailable');
      assert.equal(res.headers['cache-control'], 'no-store');
    }
    assert.equal(dead.requests.length, before);
  });

  it("404 Artifact unavailable for another user's artifact or an unknown one; nothing fetched", async () => {
    const before = dead.requests.length;
    for (const [id, headers] of [[F.artifactBob, ALICE], [F.artifact, { authorization: 'Bearer token-bob' }], [testId(99_999), ALICE]] as const) {
      const res = await get(`/api/artifacts/${id}`, headers);
      assert.equal(res.status, 404);
      assert.equal(res.json().detail, 'Artifact unavailable');
    }
    assert.equal(dead.requests.length, before);
  });

  it("thread-scoped: a fork's inherited reference before its cutoff loads; after it, 404", async () => {
    const fork = await get(`/api/console/threads/${F.fork}/artifacts/${F.rootMsgs[1]}`);
    assert.equal(fork.status, 200);
    assert.equal(fork.headers['cache-control'], 'no-store');
    assert.equal(fork.json().artifact.id, F.artifact);
    assert.equal(fork.json().resource.text, HTML);
    assert.equal((await get(`/api/console/threads/${F.root}/artifacts/${F.rootMsgs[4]}`)).status, 200, 'in its own thread');
    const after = await get(`/api/console/threads/${F.fork}/artifacts/${F.rootMsgs[4]}`);
    assert.equal(after.status, 404);
    assert.equal(after.json().detail, 'Artifact reference unavailable');
    assert.equal(after.headers['cache-control'], 'no-store');
    const none = await get(`/api/console/threads/${F.root}/artifacts/${F.rootMsgs[0]}`);
    assert.equal(none.json().detail, 'Artifact reference unavailable');
  });

  it('thread-scoped: the thread first (404 Thread unavailable), and ownership even through a thread', async () => {
    const hidden = await get(`/api/console/threads/${F.bobThread}/artifacts/${F.bobMsg}`);
    assert.equal(hidden.status, 404);
    assert.equal(hidden.json().detail, 'Thread unavailable');
    const throughThread = await get(`/api/console/threads/${F.bobThread}/artifacts/${F.bobMsg}`, { authorization: 'Bearer token-bob' });
    assert.equal(throughThread.status, 404);
    assert.equal(throughThread.json().detail, 'Artifact unavailable', 'thread participation does not grant ownership');
  });

  it('401 without a user, 422 for an id that is not a UUID, 403 for a navigation; never cached', async () => {
    for (const path of [`/api/artifacts/${ids.plain!.artifact}`, `/api/console/threads/${F.root}/artifacts/${F.rootMsgs[1]}`]) {
      const anonymous = await get(path, {});
      assert.equal(anonymous.status, 401);
      assert.equal(anonymous.headers['cache-control'], 'no-store');
      const navigation = await get(path, { ...ALICE, 'sec-fetch-mode': 'navigate', 'sec-fetch-site': 'none' });
      assert.equal(navigation.status, 403);
      const crossSite = await get(path, { ...ALICE, 'sec-fetch-site': 'cross-site' });
      assert.equal(crossSite.status, 403);
    }
    assert.equal((await get('/api/artifacts/not-a-uuid')).status, 422);
    assert.equal((await get(`/api/console/threads/${F.root}/artifacts/nope`)).status, 422);
  });

  it('offers McpAppOverview on the ledger message that carries the reference', async () => {
    const before = dead.requests.length;
    const page = (await get(`/api/console/threads/${F.root}/messages?limit=50`)).json();
    const withApp = page.items.find((m: { id: string }) => m.id === F.rootMsgs[1]);
    assert.deepEqual(withApp.app, {
      artifact_id: F.artifact, title: 'Forecast', provider_name: 'Weather',
      viewer_url: `http://localhost:${service.port}/artifacts/${F.artifact}`,
    });
    assert.equal(page.items.find((m: { id: string }) => m.id === F.rootMsgs[0]).app, undefined);
    assert.equal(dead.requests.length, before, 'built without contacting the provider');
  });
  it("answers an owned artifact's McpAppOverview for the viewer, from stored rows only, to its owner only", async () => {
    const before = servers.plain!.requests.length;
    const res = await get(`/api/artifacts/${ids.plain!.artifact.toUpperCase()}/overview`);
    assert.equal(res.status, 200);
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.deepEqual(res.json(), {
      artifact_id: ids.plain!.artifact, title: 'App plain', provider_name: 'Provider plain',
      viewer_url: `http://localhost:${service.port}/artifacts/${ids.plain!.artifact}`,
    });
    assert.equal(servers.plain!.requests.length, before, 'the provider is not contacted');
    // Even a disabled or foreign installation names its provider: the overview grants nothing.
    assert.equal((await get(`/api/artifacts/${F.artifactForeignInstallation}/overview`)).status, 200);
    const bobs = await get(`/api/artifacts/${F.artifactBob}/overview`);
    assert.equal(bobs.status, 404);
    assert.equal(bobs.json().detail, 'Artifact unavailable');
    assert.equal((await get(`/api/artifacts/${ids.plain!.artifact}/overview`, {})).status, 401);
    assert.equal((await get('/api/artifacts/nope/overview')).status, 422);
    assert.equal((await get(`/api/artifacts/${ids.plain!.artifact}/overview`, { ...ALICE, 'sec-fetch-site': 'cross-site' })).status, 403);
  });
});

describe('artifact loading without a separate sandbox origin', () => {
  const cases: { label: string; env: Record<string, string>; host: string }[] = [
    { label: 'none is configured', env: { ARTIFACT_SANDBOX_ORIGIN: '', ALLOWED_HOSTS: 'localhost:8080' }, host: 'localhost:8080' },
    // A sandbox origin set to the console's own: the dispatch stays off (it would swallow the console) and loads answer 503.
    { label: 'it is the console origin', env: { ARTIFACT_SANDBOX_ORIGIN: 'http://console.test:8080', ARTIFACT_VIEWER_ORIGIN: 'http://console.test:8080' }, host: 'console.test:8080' },
  ];
  for (const { label, env, host } of cases) {
    it(`503 when ${label}, after the ownership check, and no fetch is made`, async () => {
      const server = await startMcpServer({ resource: { text: HTML } });
      const storage = createMemoryStorage();
      const world = fixtureWorld();
      await storage.importWorld({ ...world, installations: world.installations.map((i) => ({ ...i, server_url: server.url })) });
      const service = await startService(env, { storage, fetchUiResource: createFetchUiResource() });
      try {
        const res = await service.ask({ path: `/api/artifacts/${F.artifact}`, headers: { ...ALICE, host } });
        assert.equal(res.status, 503);
        assert.equal(res.json().detail, 'Configure a separate artifact sandbox origin');
        assert.equal(res.headers['cache-control'], 'no-store');
        const notOwned = await service.ask({ path: `/api/artifacts/${F.artifactBob}`, headers: { ...ALICE, host } });
        assert.equal(notOwned.status, 404, 'ownership comes before the sandbox check');
        const viaThread = await service.ask({ path: `/api/console/threads/${F.root}/artifacts/${F.rootMsgs[1]}`, headers: { ...ALICE, host } });
        assert.equal(viaThread.status, 503);
        assert.equal(server.requests.length, 0);
        const sandboxPath = await service.ask({ path: '/artifacts/sandbox.js', headers: { host } });
        assert.equal(sandboxPath.status, 404, 'no sandbox is served on the console origin');
      } finally {
        await service.close();
        await server.close();
      }
    });
  }
});

describe('the ledger without a viewer origin', () => {
  it('offers no overview: there is nowhere to open it', async () => {
    const service = await startFixtureService({ ARTIFACT_VIEWER_ORIGIN: '' });
    try {
      const page = (await service.ask({ path: `/api/console/threads/${F.root}/messages`, headers: ALICE })).json();
      const message = page.items.find((m: { id: string }) => m.id === F.rootMsgs[1]);
      assert.equal(message.artifact_id, F.artifact);
      assert.equal(message.app, undefined);
    } finally {
      await service.close();
    }
  });
});
