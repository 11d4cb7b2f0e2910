import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { after, describe, it } from 'node:test';
import pino from 'pino';
import { createFetchUiResource } from '../../adapters/mcp/fetch-ui-resource.ts';
import type { UiResource } from '../../ports/mcp-resource.ts';
import { DEFAULT_URI, MCP_APP_MIME, startMcpServer, type McpServerOptions, type TestMcpServer } from '../support/mcp-server.ts';

const TOKEN = 's3cret-token-value';
const HEADERS = { Authorization: `Bearer ${TOKEN}`, 'X-Api-Key': 'key-0123456789' };
const CSP = { csp: { connectDomains: ['https://api.example.com'], resourceDomains: [] } };

const logLines: string[] = [];
const sink = new Writable({ write: (chunk, _enc, done) => (logLines.push(String(chunk)), done()) });
const fetchUiResource = createFetchUiResource({ log: pino({ level: 'debug' }, sink) });

const servers: TestMcpServer[] = [];
after(async () => Promise.all(servers.map((server) => server.close())));

async function serve(options: McpServerOptions): Promise<TestMcpServer> {
  const server = await startMcpServer(options);
  servers.push(server);
  return server;
}

/** Waits briefly for the server to see the client's sockets go, then asserts none is left. */
async function assertNoOpenConnection(server: TestMcpServer): Promise<void> {
  const until = Date.now() + 1000;
  while ((await server.connections()) > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.equal(await server.connections(), 0, 'a connection was left open');
}

const read = (server: TestMcpServer, timeoutMs = 2000, uri = DEFAULT_URI) =>
  fetchUiResource({ server_url: server.url, headers: HEADERS }, uri, { timeoutMs });

async function readOk(options: McpServerOptions): Promise<{ value: UiResource; server: TestMcpServer }> {
  const server = await serve(options);
  const result = await read(server);
  assert.ok(result.ok, `expected ok, got ${result.ok ? '' : result.error}`);
  await assertNoOpenConnection(server);
  return { value: result.value, server };
}

async function readFail(options: McpServerOptions, timeoutMs = 2000, uri = DEFAULT_URI): Promise<string> {
  const server = await serve(options);
  const result = await read(server, timeoutMs, uri);
  assert.equal(result.ok, false);
  await assertNoOpenConnection(server);
  const reason = result.ok ? '' : result.error;
  assert.ok(!reason.includes(TOKEN) && !reason.includes('key-0123456789'), 'a credential leaked into the reason');
  return reason;
}

describe('createFetchUiResource: reading', () => {
  it('reads a text resource and sends the credential headers on every request', async () => {
    const { value, server } = await readOk({ resource: { text: '<h1>hi</h1>' } });
    assert.deepEqual(value, { uri: DEFAULT_URI, mimeType: MCP_APP_MIME, text: '<h1>hi</h1>' });
    assert.ok(server.requests.some((request) => request.rpc === 'resources/read'));
    for (const request of server.requests) {
      assert.equal(request.headers.authorization, HEADERS.Authorization);
      assert.equal(request.headers['x-api-key'], HEADERS['X-Api-Key']);
    }
  });

  it('reads from a server answering plain JSON instead of SSE', async () => {
    const { value } = await readOk({ json: true, resource: { text: 'x', itemUi: CSP } });
    assert.deepEqual(value.ui, CSP);
  });

  it('closes a server-sent stream that the server keeps open', async () => {
    const { server } = await readOk({ getStream: true, resource: { itemUi: CSP } });
    assert.ok(server.requests.some((request) => request.method === 'GET'));
  });

  it("takes the content item's _meta.ui over the list entry's, without listing", async () => {
    const { value, server } = await readOk({ resource: { itemUi: CSP, listUi: { prefersBorder: true } } });
    assert.deepEqual(value.ui, CSP);
    assert.ok(!server.requests.some((request) => request.rpc === 'resources/list'));
  });

  it("takes the list entry's _meta.ui when the content item has none", async () => {
    const { value, server } = await readOk({ resource: { listUi: CSP } });
    assert.deepEqual(value.ui, CSP);
    assert.ok(server.requests.some((request) => request.rpc === 'resources/list'));
  });

  it('answers no ui key when neither declares one', async () => {
    const { value } = await readOk({ resource: {} });
    assert.equal('ui' in value, false);
  });

  it('decodes a base64 blob to UTF-8 text', async () => {
    const html = '<p>Zürich · 12 °C</p>';
    const { value } = await readOk({ resource: { blob: Buffer.from(html).toString('base64') } });
    assert.equal(value.text, html);
  });
});

describe('createFetchUiResource: every failure is a failed result', () => {
  const cases: [string, McpServerOptions, RegExp][] = [
    ['a blob that is not base64', { resource: { blob: '!!!!' } }, /base64/i],
    ['a blob without its padding', { resource: { blob: 'aGk' } }, /base64/i],
    ['a blob that is not UTF-8', { resource: { blob: '//4=' } }, /base64 UTF-8/],
    ['a content item of another MIME type', { resource: { mimeType: 'text/html' } }, /content item/],
    ['a _meta.ui that is not an object (item)', { resource: { itemUi: 'nope' } }, /not an object/],
    ['a _meta.ui that is not an object (list entry)', { resource: { listUi: ['x'] } }, /not an object/],
    ['an MCP error on read', { mode: 'read-error' }, /MCP error -32603: the card is broken/],
    ['an HTTP 500', { mode: 'http-500' }, /HTTP 500/],
    ['a 200 answer that is not JSON-RPC', { mode: 'garbage' }, /not valid JSON-RPC/],
  ];
  for (const [name, options, reason] of cases) {
    it(name, async () => assert.match(await readFail(options), reason));
  }

  it('an unknown resource', async () => {
    assert.match(await readFail({}, 2000, 'ui://test/other'), /MCP error/);
  });

  it('a refused connection', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    const result = await fetchUiResource({ server_url: `http://127.0.0.1:${port}/mcp`, headers: HEADERS }, DEFAULT_URI, {
      timeoutMs: 2000,
    });
    assert.deepEqual(result.ok ? null : result.error.includes('ECONNREFUSED'), true);
  });

  it('a server URL that is not http(s)', async () => {
    const result = await fetchUiResource({ server_url: 'file:///etc/passwd', headers: {} }, DEFAULT_URI, { timeoutMs: 100 });
    assert.equal(result.ok, false);
  });

  for (const mode of ['hang', 'hang-on-read'] as const) {
    it(`times out within about timeoutMs (${mode}) and leaves nothing open`, async () => {
      const started = Date.now();
      assert.match(await readFail({ mode }, 300), /timed out after 300 ms/);
      assert.ok(Date.now() - started < 1500, `took ${Date.now() - started} ms`);
    });
  }
});

describe('createFetchUiResource: credentials stay out of reasons and logs', () => {
  it('redacts a credential that the server echoes in its error', async () => {
    const reason = await readFail({ mode: 'read-error', readErrorEchoes: 'authorization' });
    assert.match(reason, /redacted/);
  });

  it('refuses an invalid header value without quoting it', async () => {
    const server = await serve({});
    const headers = { Authorization: `Bearer ${TOKEN}\nInjected: yes` };
    const result = await fetchUiResource({ server_url: server.url, headers }, DEFAULT_URI, { timeoutMs: 1000 });
    assert.deepEqual(result, { ok: false, error: 'an installation header is not a valid HTTP header' });
  });

  it('logs failures with the origin only, never a header value or the URL query', async () => {
    const server = await serve({ mode: 'http-500' });
    const url = `${server.url}?key=query-secret`;
    await fetchUiResource({ server_url: url, headers: HEADERS }, DEFAULT_URI, { timeoutMs: 1000 });
    const logged = logLines.join('');
    assert.match(logged, /MCP UI resource fetch failed/);
    assert.match(logged, new RegExp(new URL(server.url).origin.replace(/[.]/g, '\\.')));
    for (const secret of [TOKEN, 'key-0123456789', 'query-secret']) assert.ok(!logged.includes(secret), secret);
  });
});
