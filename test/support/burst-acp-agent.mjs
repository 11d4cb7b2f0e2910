// An ACP agent that answers a prompt with all its updates in one write, for the input-hold test; plain
// Node, no dependencies. `node burst-acp-agent.mjs`: answers `initialize` and `session/new`; on
// `session/prompt`, writes three `agent_message_chunk` notifications ("one", "two", "three") and the
// prompt's answer (`end_turn`) to stdout in a single write, as an agent streaming fast does.
import { createInterface } from 'node:readline';

const line = (message) => `${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`;
const chunk = (sessionId, text) =>
  line({ method: 'session/update', params: { sessionId, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } } } });

createInterface({ input: process.stdin }).on('line', (input) => {
  const { id, method, params } = JSON.parse(input);
  if (method === 'initialize') {
    process.stdout.write(line({ id, result: { protocolVersion: params.protocolVersion, agentCapabilities: {}, authMethods: [] } }));
  } else if (method === 'session/new') {
    process.stdout.write(line({ id, result: { sessionId: 'burst' } }));
  } else if (method === 'session/prompt') {
    const { sessionId } = params;
    process.stdout.write(chunk(sessionId, 'one') + chunk(sessionId, 'two') + chunk(sessionId, 'three') + line({ id, result: { stopReason: 'end_turn' } }));
  }
});
