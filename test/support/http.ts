import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';

/** An answer, read whole. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  readonly json: () => any;
}

export interface Ask {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string | Buffer;
}

/** A plain HTTP request with full control of the headers (`Host` included), which fetch does not give. */
export function ask(port: number, { method = 'GET', path, headers = {}, body }: Ask): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json: () => JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Waits until no turn runs on the thread, read through the service at `port` as `headers` say (at most 60 s). */
export async function idleThread(port: number, threadId: string, headers: Record<string, string>): Promise<void> {
  for (let i = 0; i < 1200; i += 1) {
    const conversations = (await ask(port, { path: `/api/console/threads/${threadId}/conversations`, headers })).json() as { turn_running: boolean }[];
    if (!conversations.some((c) => c.turn_running)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`a turn of thread ${threadId} did not end within 60 s`);
}
