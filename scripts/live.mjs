// Follows a thread's live socket from a shell and prints each event as one line of JSON, as it comes:
//   node scripts/live.mjs --token dev-alice "ws://localhost:8080/api/console/live?thread=$KEY&after=0"
// The token may come from CONSOLE_TOKEN instead of --token. It uses the `ws` package the service already
// depends on, so nothing is fetched from the network (docs/demo.md). It ends when the socket closes: 0 when
// the service closed it normally, 1 when the handshake was refused (its HTTP status and body are printed).
import WebSocket from 'ws';

const args = process.argv.slice(2);
let token = process.env.CONSOLE_TOKEN ?? null;
let url = null;
for (let i = 0; i < args.length; i += 1) {
  if (args[i] === '--token') token = args[++i] ?? null;
  else if (url === null) url = args[i];
}
if (url === null || token === null) {
  process.stderr.write('usage: node scripts/live.mjs --token TOKEN "ws://HOST/api/console/live?thread=ID&after=0"\n');
  process.exit(2);
}

const socket = new WebSocket(url, { headers: { authorization: `Bearer ${token}` } });
socket.on('message', (data) => process.stdout.write(`${data.toString('utf8')}\n`));
socket.on('unexpected-response', (_request, response) => {
  let body = '';
  response.on('data', (chunk) => (body += chunk));
  response.on('end', () => {
    process.stderr.write(`refused: HTTP ${response.statusCode} ${body}\n`);
    process.exit(1);
  });
});
socket.on('error', (error) => {
  process.stderr.write(`${error.message}\n`);
  process.exit(1);
});
socket.on('close', (code) => process.exit(code === 1000 || code === 1005 ? 0 : 1));
