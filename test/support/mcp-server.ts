import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';

/** The MIME type of an MCP Apps UI resource. */
export const MCP_APP_MIME = 'text/html;profile=mcp-app';

/**
 * How the server behaves: `mcp` answers MCP; `read-error` answers MCP but fails `resources/read` with
 * an MCP error; `http-500` answers every request with 500; `garbage` answers 200 with a JSON body that
 * is not JSON-RPC; `hang` never answers anything; `hang-on-read` answers MCP but never `resources/read`.
 */
export type McpServerMode = 'mcp' | 'read-error' | 'http-500' | 'garbage' | 'hang' | 'hang-on-read';

/** The `ui://` resource served; `text` or `blob` is its content, `itemUi`/`listUi` its `_meta.ui`. */
export interface TestUiResource {
  readonly uri?: string;
  readonly mimeType?: string;
  readonly text?: string;
  readonly blob?: string;
  /** `_meta.ui` on the `resources/read` content item; absent: none. */
  readonly itemUi?: unknown;
  /** `_meta.ui` on the `resources/list` entry; absent: none. */
  readonly listUi?: unknown;
}

export interface McpServerOptions {
  readonly mode?: McpServerMode;
  readonly resource?: TestUiResource;
  /** Answer POSTs with one JSON body instead of an SSE stream (both are Streamable HTTP). */
  readonly json?: boolean;
  /** Answer GET with an SSE stream that stays open, as stateful servers do, instead of 405. */
  readonly getStream?: boolean;
  /** A request header whose value the `read-error` message quotes, as a careless server might. */
  readonly readErrorEchoes?: string;
}

/** One HTTP request the server received, with its JSON-RPC method (null when the body had none). */
export interface RecordedRequest {
  readonly method: string;
  readonly rpc: string | null;
  readonly headers: IncomingHttpHeaders;
}

export interface TestMcpServer {
  readonly url: string;
  readonly requests: RecordedRequest[];
  /** How many TCP connections are open on the server right now. */
  connections(): Promise<number>;
  /** Stops the server, destroying any connection still open (a hanging one included). */
  close(): Promise<void>;
}

export const DEFAULT_URI = 'ui://test/card';

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', reject);
  });
}

const rpcMethod = (body: unknown): string | null =>
  typeof body === 'object' && body !== null && 'method' in body && typeof body.method === 'string' ? body.method : null;

/** A fresh MCP server for one request: the SDK's stateless pattern. */
function buildServer(mode: McpServerMode, resource: TestUiResource, echo: string): McpServer {
  const server = new McpServer({ name: 'test-mcp-server', version: '1.0.0' });
  const uri = resource.uri ?? DEFAULT_URI;
  const listMeta = resource.listUi === undefined ? {} : { _meta: { ui: resource.listUi } };
  server.registerResource('card', uri, { mimeType: resource.mimeType ?? MCP_APP_MIME, ...listMeta }, async () => {
    if (mode === 'read-error') throw new McpError(ErrorCode.InternalError, `the card is broken${echo}`);
    const content = resource.blob !== undefined ? { blob: resource.blob } : { text: resource.text ?? '<p>card</p>' };
    const itemMeta = resource.itemUi === undefined ? {} : { _meta: { ui: resource.itemUi } };
    return { contents: [{ uri, mimeType: resource.mimeType ?? MCP_APP_MIME, ...content, ...itemMeta }] };
  });
  return server;
}

async function answer(options: McpServerOptions, req: IncomingMessage, res: ServerResponse, body: unknown) {
  const mode = options.mode ?? 'mcp';
  if (mode === 'hang' || (mode === 'hang-on-read' && rpcMethod(body) === 'resources/read')) return;
  if (mode === 'http-500') {
    res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
    return;
  }
  if (mode === 'garbage') {
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"hello":"world"}');
    return;
  }
  if (req.method === 'GET' && options.getStream === true) {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }).write(': open\n\n');
    return;
  }
  if (req.method !== 'POST') {
    // Stateless: there is no session to stream to or delete, as in the SDK's own stateless example.
    res.writeHead(405, { allow: 'POST' }).end();
    return;
  }
  const echoed = options.readErrorEchoes === undefined ? undefined : req.headers[options.readErrorEchoes.toLowerCase()];
  const server = buildServer(mode, options.resource ?? {}, echoed === undefined ? '' : ` (you sent ${String(echoed)})`);
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: undefined,
    enableJsonResponse: options.json ?? false,
  });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** Starts a real MCP server (the SDK's server side, stateless Streamable HTTP) on 127.0.0.1:0. */
export async function startMcpServer(options: McpServerOptions = {}): Promise<TestMcpServer> {
  const requests: RecordedRequest[] = [];
  const http = createServer((req, res) => {
    void readBody(req)
      .then((body) => {
        requests.push({ method: req.method ?? '', rpc: rpcMethod(body), headers: req.headers });
        return answer(options, req, res, body);
      })
      .catch(() => {
        if (!res.headersSent) res.writeHead(500).end();
      });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    connections: () => new Promise((resolve, reject) => http.getConnections((e, n) => (e ? reject(e) : resolve(n)))),
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}
