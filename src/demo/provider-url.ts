import type { FetchUiResource } from '../../ports/mcp-resource.ts';

/**
 * The demo world's installation names the bundled provider as `http://127.0.0.1:<port>/demo/mcp`. The
 * provider is this very service, so the port is resolved when a load runs, from the port it listens on
 * now: a data dir first started on another `PORT` (or port 0) still loads its demo artifact. Only that
 * exact shape is rewritten, and only in demo mode (the composition root decides).
 */
const DEMO_PROVIDER = /^http:\/\/127\.0\.0\.1:\d{1,5}(\/demo\/mcp)$/;

export function demoProviderFetch(fetch: FetchUiResource, listeningPort: () => number): FetchUiResource {
  return (endpoint, uri, options) => {
    const match = DEMO_PROVIDER.exec(endpoint.server_url);
    const server_url = match === null ? endpoint.server_url : `http://127.0.0.1:${listeningPort()}${match[1]}`;
    return fetch({ ...endpoint, server_url }, uri, options);
  };
}
