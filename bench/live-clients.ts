// A child process of the fan-out benchmark: opens N live sockets on one thread and reports, per event
// received, how long it took from publish to arrival. Kept apart from the server so the server's
// memory per socket is measured alone.
import { WebSocket } from 'ws';

const [port, count, thread] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]!];
const now = () => performance.timeOrigin + performance.now();
const latencies: number[] = [];
let open = 0;

const sockets = Array.from({ length: count }, () => {
  const ws = new WebSocket(`ws://127.0.0.1:${port}/api/console/live?thread=${thread}`, { headers: { authorization: 'Bearer token-alice' } });
  ws.on('open', () => {
    open += 1;
    if (open === count) process.stdout.write(JSON.stringify({ open }) + '\n');
  });
  ws.on('message', (data) => {
    const event = JSON.parse(String(data));
    latencies.push(now() - event.data.sent_at);
  });
  ws.on('error', (error) => process.stderr.write(`${error.message}\n`));
  return ws;
});

process.stdin.on('data', () => {
  for (const ws of sockets) ws.terminate();
  // Exit only once the (large) report is flushed to the pipe.
  process.stdout.write(JSON.stringify({ latencies }) + '\n', () => process.exit(0));
});
