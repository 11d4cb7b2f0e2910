// An ACP agent that answers a prompt with all its updates in one write, for the input-hold tests; plain
// Node, no dependencies. `node burst-acp-agent.mjs [exit]`: answers `initialize` and `session/new` (a new
// session id each time); on `session/prompt` with text T, writes three `agent_message_chunk` notifications
// ("T one", "T two", "T three") and the prompt's answer (`end_turn`) to stdout in a single write, as an agent
// streaming fast does. With `exit`, it then exits at once (status 0).
import { createInterface } from 'node:readline';

const exitAfter = process.argv[2] === 'exit';
const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const chunk = (sessionId, text) =>
  line({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });
let sessions = 0;

createInterface({ input: process.stdin }).on('line', (input) => {
  const { id, method, params } = JSON.parse(input);
  if (method === 'initialize') {
    process.stdout.write(line({ id, result: { protocolVersion: params.protocolVersion, agentCapabilities: {}, authMethods: [] } }));
  } else if (method === 'session/new') {
    process.stdout.write(line({ id, result: { sessionId: `burst-${++sessions}` } }));
  } else if (method === 'session/prompt') {
    const { sessionId } = params;
    const text = params.prompt[0]?.text ?? '';
    const burst = chunk(sessionId, `${text} one`) + chunk(sessionId, `${text} two`) + chunk(sessionId, `${text} three`) + line({ id, result: { stopReason: 'end_turn' } });
    if (exitAfter) process.stdout.write(burst, () => process.exit(0));
    else process.stdout.write(burst);
  }
});
