import type { Mount } from '../http/edge.ts';
import { lazily } from '../lazily.ts';

/** The credential the demo world's installation sends (`src/world/demo-world.json`). */
export const DEMO_PROVIDER_CREDENTIAL = 'Bearer demo-provider-secret';

/**
 * The bundled demo MCP provider, mounted on the console origin in demo mode. Like a real provider it
 * answers only the installation's credential, so the service's origin offers no open tool endpoint.
 */
export function demoProviderMount(path: string): Mount {
  // The MCP SDK's server side is imported on the first call to the provider, not at start.
  const handler = lazily(async () => (await import('./mcp-server.ts')).createDemoMcpHandler());
  return {
    path,
    handle: async (req, res) => {
      if (req.headers.authorization !== DEMO_PROVIDER_CREDENTIAL) {
        res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized' } }));
        return;
      }
      await handler.call(req, res);
    },
  };
}
