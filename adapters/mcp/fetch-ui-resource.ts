import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { FetchUiResource, McpEndpoint, UiResource } from '../../ports/mcp-resource.ts';

const MCP_APP_MIME = 'text/html;profile=mcp-app';
/** A provider that pages `resources/list` forever must not hold the fetch past its budget anyway. */
const MAX_LIST_PAGES = 20;
const MAX_REASON = 200;
const noop = (): void => {};

type Ui = Readonly<Record<string, unknown>>;
type Options = { readonly signal: AbortSignal; readonly timeout: number };

/** Bytes of one answer from a provider, by default, past which the read fails (MAX_UI_RESOURCE_BYTES). */
export const DEFAULT_MAX_ANSWER_BYTES = 5 * 1024 * 1024;

/** A provider's answer grew past the cap: the read fails (502), and no more of it is read. */
class AnswerTooLargeError extends Error {
  constructor(maxBytes: number) {
    super(`the provider's answer is over ${maxBytes} bytes`);
    this.name = 'AnswerTooLargeError';
  }
}

/**
 * A `fetch` over agents of its own. Node's global fetch keeps idle sockets pooled for seconds and
 * does not close the socket of an aborted request that has no answer yet; `destroy()` here closes
 * every connection this one read opened, idle, streaming or hanging.
 */
function privateFetch(maxBytes: number): { readonly fetch: FetchLike; destroy(): void } {
  const agents = { http: new HttpAgent(), https: new HttpsAgent() };
  const toResponse = (res: IncomingMessage): Response => {
    // A declared length over the cap is refused before a byte is read; a stream is cut once it passes it.
    if (Number(res.headers['content-length'] ?? 0) > maxBytes) {
      res.destroy();
      throw new AnswerTooLargeError(maxBytes);
    }
    let received = 0;
    res.on('data', (chunk: Buffer) => {
      received += chunk.length;
      if (received > maxBytes) res.destroy(new AnswerTooLargeError(maxBytes));
    });
    const headers = new Headers();
    for (let i = 0; i + 1 < res.rawHeaders.length; i += 2) headers.append(res.rawHeaders[i]!, res.rawHeaders[i + 1]!);
    const status = res.statusCode ?? 0;
    const empty = status === 204 || status === 205 || status === 304;
    if (empty) res.resume();
    const body = empty ? null : (Readable.toWeb(res) as unknown as ReadableStream<Uint8Array>);
    return new Response(body, { status, statusText: res.statusMessage ?? '', headers });
  };
  const fetch: FetchLike = (url, init = {}) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const https = target.protocol === 'https:';
      if (init.body !== undefined && init.body !== null && typeof init.body !== 'string') {
        throw new TypeError('only string bodies are sent');
      }
      const headers: Record<string, string> = {};
      new Headers(init.headers).forEach((value, name) => (headers[name] = value));
      const options = { method: init.method ?? 'GET', headers, signal: init.signal ?? undefined };
      const onResponse = (res: IncomingMessage): void => {
        try {
          resolve(toResponse(res));
        } catch (error) {
          res.destroy();
          reject(error);
        }
      };
      const req = https
        ? httpsRequest(target, { ...options, agent: agents.https }, onResponse)
        : httpRequest(target, { ...options, agent: agents.http }, onResponse);
      req.on('error', reject);
      req.end(init.body ?? undefined);
    });
  return { fetch, destroy: () => (agents.http.destroy(), agents.https.destroy()) };
}

const isObject = (value: unknown): value is Ui => typeof value === 'object' && value !== null && !Array.isArray(value);
const isAppHtml = (mime: unknown): mime is string =>
  typeof mime === 'string' && mime.replace(/\s+/g, '').toLowerCase() === MCP_APP_MIME;

/** Strict base64 (RFC 4648 alphabet and padding) decoded as UTF-8; null when either is invalid. */
function decodeBlob(blob: string): string | null {
  if (blob.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(blob)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(blob, 'base64'));
  } catch {
    return null;
  }
}

/** The `_meta.ui` of the `resources/list` entry for `uri`, following pages; undefined when none. */
async function listedUi(client: Client, uri: string, options: () => Options): Promise<unknown> {
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const listed = await client.listResources(cursor === undefined ? {} : { cursor }, options());
    const entry = listed.resources.find((resource) => resource.uri === uri);
    if (entry !== undefined) return entry._meta?.ui;
    if (listed.nextCursor === undefined) return undefined;
    cursor = listed.nextCursor;
  }
  return undefined;
}

/** Connects, reads, and picks the HTML item and its `_meta.ui` (the item's first, else the list entry's). */
async function readUi(
  client: Client,
  transport: StreamableHTTPClientTransport,
  uri: string,
  options: () => Options,
): Promise<Result<UiResource, string>> {
  await client.connect(transport, options());
  const read = await client.readResource({ uri }, options());
  const item = read.contents.find((content) => isAppHtml(content.mimeType));
  if (item === undefined) return fail(`no ${MCP_APP_MIME} content item`);
  let text: string | null = null;
  if ('text' in item && typeof item.text === 'string') text = item.text;
  else if ('blob' in item && typeof item.blob === 'string') text = decodeBlob(item.blob);
  if (text === null) return fail('content item has neither text nor a valid base64 UTF-8 blob');
  const itemUi = isObject(item._meta) ? item._meta.ui : undefined;
  const ui = itemUi !== undefined ? itemUi : await listedUi(client, uri, options);
  if (ui !== undefined && !isObject(ui)) return fail('_meta.ui is not an object');
  const resource: UiResource = { uri, mimeType: item.mimeType as string, text, ...(ui === undefined ? {} : { ui }) };
  return ok(resource);
}

/** A short reason for the log: never an upstream body at length, never a header value or the full URL. */
function describe(error: unknown, timedOut: boolean, timeoutMs: number, endpoint: McpEndpoint, origin: string): string {
  let reason: string;
  if (timedOut || (error instanceof McpError && error.code === ErrorCode.RequestTimeout)) {
    reason = `timed out after ${timeoutMs} ms`;
  } else if (error instanceof StreamableHTTPError) {
    reason = (error.code ?? 0) > 0 ? `HTTP ${error.code}` : 'answer is not JSON-RPC (unexpected content type)';
  } else if (error instanceof Error && Array.isArray((error as { issues?: unknown }).issues)) {
    // A zod error: the answer is not JSON-RPC, or a result does not match MCP's schema (a bad base64 blob).
    const [issue] = (error as unknown as { issues: { path?: unknown[]; message?: string }[] }).issues;
    const where = issue?.path?.length ? `${issue.path.join('.')}: ` : '';
    reason = `answer is not valid JSON-RPC or MCP${issue ? ` (${where}${issue.message})` : ''}`;
  } else if (error instanceof TypeError && /header/i.test(error.message)) {
    reason = 'an installation header is not a valid HTTP header'; // fetch's own text quotes the value
  } else if (error instanceof SyntaxError) {
    reason = 'answer is not JSON';
  } else if (error instanceof McpError) {
    reason = error.message.replace(/^(MCP error -?\d+: )\1+/, '$1'); // servers often prefix it already
  } else if (error instanceof Error) {
    const code = (error as { code?: unknown }).code ?? (error.cause as { code?: unknown } | undefined)?.code;
    reason = `${error.message}${typeof code === 'string' ? ` (${code})` : ''}`;
  } else {
    reason = 'unknown failure';
  }
  // Some error texts quote what was sent (an invalid header value) or what came back (a server may echo).
  const secrets = Object.values(endpoint.headers).flatMap((value) => [value, ...value.split(/\s+/)]);
  for (const secret of secrets.filter((s) => s.length >= 4).sort((a, b) => b.length - a.length)) {
    reason = reason.split(secret).join('[redacted]');
  }
  reason = reason.split(endpoint.server_url).join(origin);
  return reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}…` : reason;
}

async function fetchOnce(endpoint: McpEndpoint, uri: string, timeoutMs: number, maxBytes: number): Promise<Result<UiResource, string>> {
  if (!URL.canParse(endpoint.server_url)) return fail('server URL is not a URL');
  const url = new URL(endpoint.server_url);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fail('server URL is not http(s)');
  const deadline = Date.now() + timeoutMs;
  const controller = new AbortController();
  // The SDK's per-request timeout does not cover the `initialized` notification inside connect(), so one
  // overall race against the deadline bounds everything; the signal and timeout also stop each request.
  const expired = new Promise<never>((_, reject) =>
    controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
  );
  expired.catch(noop);
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  const sockets = privateFetch(maxBytes);
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers: { ...endpoint.headers } },
    fetch: sockets.fetch,
  });
  const client = new Client({ name: 'agent-console-service', version: '0.1.0' });
  const options = (): Options => ({ signal: controller.signal, timeout: Math.max(1, deadline - Date.now()) });
  try {
    const work = readUi(client, transport, uri, options);
    work.catch(noop); // when the deadline wins the race, the closing below rejects it: expected
    return await Promise.race([work, expired]);
  } catch (error) {
    return fail(describe(error, controller.signal.aborted, timeoutMs, endpoint, url.origin));
  } finally {
    clearTimeout(timer);
    await client.close().catch(noop);
    await transport.close().catch(noop);
    sockets.destroy();
  }
}

/**
 * The MCP adapter of `FetchUiResource`: one fresh Streamable HTTP client per read, with the
 * installation's headers, closed (sockets included) before it answers. Failures are logged at
 * `warn` with the server's origin and a short reason, never with the headers.
 */
export function createFetchUiResource(options: { readonly log?: Logger; readonly maxBytes?: number } = {}): FetchUiResource {
  const { log } = options;
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  return async (endpoint, uri, { timeoutMs }) => {
    let result: Result<UiResource, string>;
    try {
      result = await fetchOnce(endpoint, uri, timeoutMs, maxBytes);
    } catch {
      result = fail('unexpected failure while reading the resource'); // a bug: still never thrown at callers
    }
    if (!result.ok) {
      const server = URL.canParse(endpoint.server_url) ? new URL(endpoint.server_url).origin : 'invalid URL';
      log?.warn({ uri, server, reason: result.error }, 'MCP UI resource fetch failed');
    }
    return result;
  };
}
