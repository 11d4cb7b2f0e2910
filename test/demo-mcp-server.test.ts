import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createFetchUiResource } from '../adapters/mcp/fetch-ui-resource.ts';
import { createDemoMcpHandler, forecastFor } from '../src/demo/mcp-server.ts';
import { escapeInlineScript, WEATHER_APP_URI } from '../src/demo/weather-app.ts';

describe('the demo MCP server', () => {
  let server: Server;
  let url: string;

  before(async () => {
    const handler = createDemoMcpHandler();
    server = createServer((req, res) => void handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  });
  after(() => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))));

  it('serves the weather card through the MCP adapter, with its declared CSP', async () => {
    const result = await createFetchUiResource()({ server_url: url, headers: {} }, WEATHER_APP_URI, { timeoutMs: 10_000 });
    assert.ok(result.ok, result.ok ? '' : result.error);
    const { value } = result;
    assert.equal(value.mimeType, 'text/html;profile=mcp-app');
    assert.deepEqual(value.ui, {
      csp: { connectDomains: ['https://api.open-meteo.com'], resourceDomains: [] },
      prefersBorder: true,
    });
    const scripts = [...value.text.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1]!);
    assert.equal(scripts.length, 1, 'one inline script');
    const bundle = scripts[0]!;
    // The App bundle is inlined: it names the MCP Apps handshake and the view's probes.
    assert.match(bundle, /ui\/initialize/);
    assert.match(bundle, /undeclaredFetch/);
    assert.doesNotMatch(bundle, /<\/script|<!--/i);
    assert.doesNotMatch(value.text, /\b(src|href)=/, 'no external resource');
    // The script tag ends where the bundle ends: the closing tag found is the document's own.
    assert.ok(value.text.indexOf('</script>') > value.text.indexOf(bundle.slice(-200)));
  });

  it('calls get_forecast: text content and structured content', async () => {
    const client = new Client({ name: 'demo-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const tools = await client.listTools();
      const tool = tools.tools.find((t) => t.name === 'get_forecast');
      assert.deepEqual(tool?._meta?.ui, { resourceUri: WEATHER_APP_URI });
      const result = await client.callTool({ name: 'get_forecast', arguments: { city: 'Lisbon' } });
      assert.deepEqual(result.structuredContent, forecastFor('Lisbon'));
      const [content] = result.content as { type: string; text: string }[];
      assert.equal(content?.type, 'text');
      assert.match(content!.text, /^Lisbon: /);
    } finally {
      await client.close();
    }
  });

  it('answers GET with 405 (stateless: no stream to open)', async () => {
    const response = await fetch(url, { headers: { accept: 'text/event-stream' } });
    assert.equal(response.status, 405);
    await response.body?.cancel();
  });

  it('escapes text that would end or unbalance an inline script', () => {
    assert.equal(escapeInlineScript('a="</script>";b=/<!--/;c="</SCRIPT"'), 'a="\\x3C/script>";b=/\\x3C!--/;c="\\x3C/SCRIPT"');
  });
});
