// The floor of a turn behind an HTTP request and a live socket (bench/turn-overhead.ts): a relay with
// nothing of the service (no storage, no authentication, no checks), in a process of its own. It starts
// the demo agent (argv[2]) as the bare ACP client does, opens one session, then on each `POST /prompt`
// (`{"text": ...}`) answers 202 and sends `session/prompt`; every `agent_message_chunk` goes to every
// WebSocket as `{"type":"message","data":{"delta":...}}`, and the prompt's end as `{"type":"reflex_asleep"}`.
// It prints `{"port": N}` once it listens, and ends its agent's process group on SIGTERM.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { WebSocketServer, type WebSocket } from 'ws';
import { agentEnvironment } from '../domain/agent-env.ts';

const { env } = agentEnvironment({}, process.env);
const cwd = mkdtempSync(join(tmpdir(), 'console-bench-relay-'));
const agent = spawn(process.execPath, [process.argv[2]!], { stdio: ['pipe', 'pipe', 'ignore'], env, detached: true });
const sockets = new Set<WebSocket>();
const send = (frame: string) => {
  for (const socket of sockets) socket.send(frame);
};
const connection = acp
  .client({ name: 'bench-relay' })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === 'agent_message_chunk' && update.content.type === 'text') send(JSON.stringify({ type: 'message', data: { delta: update.content.text } }));
  })
  .onRequest(acp.methods.client.session.requestPermission, async () => ({ outcome: { outcome: 'cancelled' } }))
  .connect(acp.ndJsonStream(Writable.toWeb(agent.stdin!), Readable.toWeb(agent.stdout!) as unknown as ReadableStream<Uint8Array>));
await connection.agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
});
const { sessionId } = await connection.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    const { text } = JSON.parse(body) as { text: string };
    void connection.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text }] }).then(() => send('{"type":"reflex_asleep","data":{}}'));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
  });
});
new WebSocketServer({ server }).on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`));
process.on('SIGTERM', () => {
  try {
    process.kill(-agent.pid!, 'SIGTERM');
  } catch {
    // Gone already.
  }
  rmSync(cwd, { recursive: true, force: true });
  process.exit(0);
});
