// One of the MCP project's published example servers (an npm package, pinned in devDependencies),
// started as published (its own `dist/index.js`, Streamable HTTP on `PORT`) in a process group of its
// own, and reached only through a recording HTTP proxy on 127.0.0.1 that counts the JSON-RPC methods the
// provider receives. Tests read those counts to prove what the viewer never forwards (`tools/call`).
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort } from './free-port.ts';

export interface PublishedApp {
  /** The MCP endpoint, through the recording proxy. */
  readonly url: string;
  /** Every JSON-RPC method the provider received since the last `reset`, in order. */
  readonly methods: () => readonly string[];
  readonly reset: () => void;
  /** Calls a tool directly (as the agent that saved the result did), outside the viewer. */
  readonly callTool: (name: string, args?: Record<string, unknown>) => Promise<Record<string, unknown>>;
  readonly close: () => Promise<void>;
}

const require = createRequire(import.meta.url);

/** The published package's command (`dist/index.js`, its `bin`), beside the module its exports name. */
function entryOf(packageName: string): string {
  return join(dirname(require.resolve(packageName)), 'index.js');
}

/** Waits until the server prints that it listens, or fails after `ms`. */
function listening(child: ChildProcess, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => reject(new Error(`the example server did not start in ${ms} ms: ${seen}`)), ms);
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      if (seen.includes('listening')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => (seen += chunk.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the example server exited (${code}): ${seen}`));
    });
  });
}

/** The methods in a JSON-RPC body (one message or a batch); nothing when it is not JSON-RPC. */
function methodsIn(body: string): string[] {
  try {
    const parsed: unknown = JSON.parse(body);
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages.flatMap((m) => (m !== null && typeof m === 'object' && typeof (m as { method?: unknown }).method === 'string' ? [(m as { method: string }).method] : []));
  } catch {
    return [];
  }
}

export async function startPublishedApp(packageName: string): Promise<PublishedApp> {
  const port = await freePort();
  const child = spawn(process.execPath, [entryOf(packageName)], {
    env: { PATH: process.env.PATH ?? '', PORT: String(port), NODE_ENV: 'production' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // its own process group, ended as a whole
  });
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
    await exited;
  };
  try {
    await listening(child, 15_000);
  } catch (error) {
    await stop();
    throw error;
  }

  let seen: string[] = [];
  const proxy: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      seen.push(...methodsIn(body.toString('utf8')));
      const upstream = request(
        // A fresh connection per request, without the caller's hop-by-hop headers.
        { host: '127.0.0.1', port, method: req.method, path: req.url, agent: false,
          headers: { ...req.headers, host: `127.0.0.1:${port}`, connection: 'close', 'content-length': String(body.length) } },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      upstream.on('error', () => {
        if (!res.headersSent) res.writeHead(502);
        res.end();
      });
      upstream.end(body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;

  return {
    url,
    methods: () => [...seen],
    reset: () => {
      seen = [];
    },
    callTool: async (name, args = {}) => {
      const client = new Client({ name: 'published-app-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        return (await client.callTool({ name, arguments: args })) as Record<string, unknown>;
      } finally {
        await client.close();
      }
    },
    close: async () => {
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await stop();
    },
  };
}
