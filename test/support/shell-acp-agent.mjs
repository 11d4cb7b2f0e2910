// An ACP agent whose every prompt is a shell command: it runs the prompt's text with `sh -c` in the
// session's cwd and answers with what the command wrote (stdout, then stderr), as one text chunk.
// What an agent that can run a shell may do, for the sandbox's tests; plain Node, no dependencies.
import { execFile } from 'node:child_process';
import { createInterface } from 'node:readline';

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
const sessions = new Map();
let next = 0;

createInterface({ input: process.stdin }).on('line', (line) => {
  const { id, method, params } = JSON.parse(line);
  if (method === 'initialize') {
    send({ id, result: { protocolVersion: params.protocolVersion, agentCapabilities: {}, authMethods: [] } });
  } else if (method === 'session/new') {
    const sessionId = `shell-${process.pid}-${next++}`;
    sessions.set(sessionId, params.cwd);
    send({ id, result: { sessionId } });
  } else if (method === 'session/prompt') {
    const command = params.prompt.map((block) => block.text ?? '').join('');
    execFile('sh', ['-c', command], { cwd: sessions.get(params.sessionId), timeout: 20_000 }, (_error, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      send({ method: 'session/update', params: { sessionId: params.sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
      send({ id, result: { stopReason: 'end_turn' } });
    });
  } else if (id !== undefined) {
    send({ id, error: { code: -32601, message: `no ${method}` } });
  }
});
