import type { IncomingMessage, ServerResponse } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import { buildWeatherAppScript, MCP_APP_MIME, WEATHER_APP_UI, WEATHER_APP_URI, weatherAppHtml } from './weather-app.ts';

const SUMMARIES = ['Sunny', 'Partly cloudy', 'Overcast', 'Light rain', 'Showers', 'Windy', 'Fog'];

/** A canned forecast, the same for the same city: the demo makes no network call of its own. */
export function forecastFor(city: string): { city: string; summary: string; temperature_c: number } {
  let hash = 0;
  for (const char of city.trim().toLowerCase()) hash = (hash * 31 + char.codePointAt(0)!) >>> 0;
  return { city, summary: SUMMARIES[hash % SUMMARIES.length]!, temperature_c: (hash % 35) - 5 };
}

/** The demo's MCP server for one request: one tool, one UI resource. */
function demoServer(html: () => Promise<string>): McpServer {
  const server = new McpServer({ name: 'demo-weather', version: '1.0.0' });
  server.registerTool(
    'get_forecast',
    {
      title: 'Get forecast',
      description: "Today's weather for a city (canned demo data), shown as a weather card.",
      inputSchema: { city: z.string().min(1) },
      outputSchema: { city: z.string(), summary: z.string(), temperature_c: z.number() },
      // Both spellings of the MCP Apps tool-to-UI link: the current one and the older flat key.
      _meta: { ui: { resourceUri: WEATHER_APP_URI }, 'ui/resourceUri': WEATHER_APP_URI },
    },
    async ({ city }) => {
      const forecast = forecastFor(city);
      const text = `${forecast.city}: ${forecast.summary}, ${forecast.temperature_c} °C`;
      return { content: [{ type: 'text', text }], structuredContent: forecast };
    },
  );
  server.registerResource(
    'weather-forecast',
    WEATHER_APP_URI,
    { title: 'Weather card', description: 'Shows a get_forecast result.', mimeType: MCP_APP_MIME },
    async () => ({
      contents: [{ uri: WEATHER_APP_URI, mimeType: MCP_APP_MIME, text: await html(), _meta: { ui: WEATHER_APP_UI } }],
    }),
  );
  return server;
}

/**
 * The bundled demo MCP server as a `node:http` handler: stateless Streamable HTTP, a new `McpServer`
 * and transport per request, answering POST only (no session, so no stream to GET or session to
 * DELETE). Give it the request unread: the transport reads the body itself. Mount it on the console
 * origin only, never on the sandbox origin.
 */
export function createDemoMcpHandler(): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // Bundled once, at the first read of the resource; a failed build is retried by the next read.
  let page: Promise<string> | undefined;
  const html = (): Promise<string> => {
    page ??= buildWeatherAppScript()
      .then(weatherAppHtml)
      .catch((error: unknown) => {
        page = undefined;
        throw error;
      });
    return page;
  };
  return async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST', 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null }));
      return;
    }
    const server = demoServer(html);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res);
    } catch {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      if (!res.writableEnded) res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
    }
  };
}
