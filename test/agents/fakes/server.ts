import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a fake model server received, body parsed when it is JSON. */
export interface SeenRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: any;
}

/** A fake model server on 127.0.0.1: what it was asked, and how to stop it. */
export interface FakeModel {
  readonly port: number;
  readonly url: string;
  readonly requests: SeenRequest[];
  /** Model calls held open (a fake that holds them: see {@link HOLD_MARKER}), so a turn is in flight while a test steers it. */
  readonly holds?: HeldCalls;
  close(): Promise<void>;
}

/** A prompt with this in its text has its first model call held open until released (or 30 s). */
export const HOLD_MARKER = 'Wait for my next message';

/** The model calls a fake holds open. */
export interface HeldCalls {
  /** Resolves once a call is held: the agent's turn waits on its model. */
  held(): Promise<void>;
  /** Answers every held call (a call the agent gave up on meanwhile is let go). */
  release(): void;
}

/**
 * Holds calls until released: `hold(answer)` keeps `answer` for {@link HeldCalls.release}, or for 30 s at most,
 * so a test that never releases never hangs the agent.
 */
export function heldCalls(): HeldCalls & { hold(answer: () => void): void } {
  const waiting: (() => void)[] = [];
  let started!: () => void;
  const first = new Promise<void>((resolve) => (started = resolve));
  const release = () => {
    for (const answer of waiting.splice(0)) {
      try {
        answer();
      } catch {
        // The agent closed the call meanwhile.
      }
    }
  };
  return {
    held: () => first,
    release,
    hold(answer) {
      waiting.push(answer);
      setTimeout(release, 30_000).unref();
      started();
    },
  };
}

/** Answers one request; false for "not mine" (then 404). */
export type FakeHandler = (request: SeenRequest, res: ServerResponse) => boolean | Promise<boolean>;

/**
 * A loopback HTTP server that records every request and hands it to `handle`. It listens on
 * 127.0.0.1 only: the agents' model calls never leave the machine.
 */
export async function startFakeModel(handle: FakeHandler): Promise<FakeModel> {
  const requests: SeenRequest[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    let body: any = text;
    try {
      body = text === '' ? null : JSON.parse(text);
    } catch {
      // not JSON: kept as text
    }
    const seen = { method: req.method ?? 'GET', url: req.url ?? '/', headers: req.headers, body };
    requests.push(seen);
    try {
      if (!(await handle(seen, res))) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":{"message":"not served by the fake"}}');
      }
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes a server-sent event stream: each entry one event (`event:` line when named), then ends it. */
export function sendSse(res: ServerResponse, events: readonly { readonly event?: string; readonly data: unknown }[]): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  for (const { event, data } of events) {
    res.write(`${event !== undefined ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
  }
  res.end();
}

/** What a test asks the agent to do, written in its prompt: `Create the file NAME containing: TEXT`. */
export interface FileTask {
  readonly name: string;
  readonly text: string;
}

/** The file task a prompt names, or null for a prompt that only wants an answer. */
export function fileTaskOf(prompt: string): FileTask | null {
  const match = /Create the file (\S+) containing: (.+)$/m.exec(prompt);
  return match ? { name: match[1]!, text: match[2]! } : null;
}
