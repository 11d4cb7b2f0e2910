// The floor of a turn behind an HTTP request and a live socket (bench/turn-overhead.ts): a relay with
// nothing of the service (no storage, no authentication, no checks), in a process of its own. It starts
// the demo agent (argv[2]) as the bare ACP client does, opens one session, then on each `POST /prompt`
// (`{"text": ...}`) answers 202 and sends `session/prompt`; every `agent_message_chunk` goes to every
// WebSocket as `{"type":"message","data":{"delta":...}}`, and the prompt's end as `{"type":"reflex_asleep"}`.
// It prints `{"port": N}` once it listens, and ends its agent's process group on SIGTERM.
import { createServer } from 'node:http';
import { WebSocketServer, type WebSocket } from 'ws';
import { demoAgentSession } from './demo-agent-session.ts';

const sockets = new Set<WebSocket>();
const send = (frame: string) => {
  for (const socket of sockets) socket.send(frame);
};
const session = await demoAgentSession(process.argv[2]!, (text) => send(JSON.stringify({ type: 'message', data: { delta: text } })));

const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => (body += chunk));
  req.on('end', () => {
    const { text } = JSON.parse(body) as { text: string };
    void session.prompt(text).then(() => send('{"type":"reflex_asleep","data":{}}'));
    res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
  });
});
new WebSocketServer({ server }).on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`));
process.on('SIGTERM', () => void session.close().finally(() => process.exit(0)));
