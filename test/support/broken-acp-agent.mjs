// An ACP agent that misbehaves, for the runner's fault tests; plain Node, no dependencies.
// `node broken-acp-agent.mjs <how> [VARIABLE]`, where <how> is:
//   silent        reads nothing, answers nothing (a process that starts and hangs);
//   no-session    answers `initialize`, never `session/new` or `session/load`;
//   session-error answers `initialize` (it can load sessions), and `session/new` and `session/load` with an
//                 error whose text holds the value of VARIABLE (a provider body quoting the agent's key);
//   stderr        first writes to stderr a line whose value of VARIABLE starts at character 1990, and a
//                 200 KiB line without end, then hangs like `silent`.
// Every mode first writes its pid to the file named by BROKEN_AGENT_PID, when set; the modes that read
// append each method they are asked, one a line, to that name with `.asked` after it.
import { appendFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

const [how, variable = ''] = process.argv.slice(2);
const secret = process.env[variable] ?? '';
if (process.env.BROKEN_AGENT_PID) writeFileSync(process.env.BROKEN_AGENT_PID, String(process.pid));
setInterval(() => {}, 1e9);

if (how === 'stderr') {
  process.stderr.write(`${'x'.repeat(1990)}${secret} end\n`);
  process.stderr.write('y'.repeat(200 * 1024));
  process.stderr.write('\nafter the long line\n');
}

if (how === 'no-session' || how === 'session-error') {
  const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  createInterface({ input: process.stdin }).on('line', (line) => {
    const { id, method, params } = JSON.parse(line);
    if (process.env.BROKEN_AGENT_PID) appendFileSync(`${process.env.BROKEN_AGENT_PID}.asked`, `${method}\n`);
    if (method === 'initialize') {
      send({ id, result: { protocolVersion: params.protocolVersion, agentCapabilities: { loadSession: true }, authMethods: [] } });
    } else if ((method === 'session/new' || method === 'session/load') && how === 'session-error') {
      send({ id, error: { code: -32603, message: `the provider said: {"error":"invalid key ${secret}"}`, data: { key: secret } } });
    }
  });
}
