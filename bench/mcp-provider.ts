// A real MCP server (the official SDK, stateless Streamable HTTP) serving one UI resource on a loopback
// port, in a process of its own so its work is no part of the side it serves. Prints its URL, then
// serves until its parent ends it.
import { startMcpServer } from '../test/support/mcp-server.ts';

const HTML = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Forecast</title></head><body><div id="app">${'Sunny. '.repeat(200)}</div><script>/* app */</script></body></html>`;
const server = await startMcpServer({
  resource: { uri: process.argv[2] ?? 'ui://weather/card', text: HTML, itemUi: { csp: { connectDomains: ['https://api.example.com'] } } },
});
process.stdout.write(`${server.url}\n`);
process.on('SIGTERM', () => void server.close().then(() => process.exit(0)));
