// A child process of the fan-out benchmark: opens N live sockets on one thread and reports, per event
// received, how long it took from publish to arrival. Kept apart from the server so the server's
// memory per socket is measured alone. The same code connects to the service and to the bare `ws`
// baseline (which ignores the path and the header), so both sides are read by the same client.
//
// Protocol on stdin/stdout, one JSON line each: `{open, openMs}` once every socket is open; on
// `count`, `{received}`; on `report`, `{received, closed, p50, p99, max, fewest, most, repeats, gaps}` and the
// process exits. Per socket, each event's `seq` is checked against the one before it: `repeats` counts
// events that came again or behind a later one, `gaps` events that skipped some; `fewest` and `most`
// are the fewest and most events one socket received (so every socket got every event once when both
// equal the number published and there is no repeat).
import { createInterface } from 'node:readline';
import { WebSocket } from 'ws';

const [port, count, thread] = [Number(process.argv[2]), Number(process.argv[3]), process.argv[4]!];
// Opened in batches: 10,000 handshakes at once would overflow the listen backlog and time out in SYN retries.
const BATCH = 500;
const now = () => performance.timeOrigin + performance.now();
let latencies = new Float64Array(1 << 16);
let received = 0;
let closed = 0;
let repeats = 0;
let gaps = 0;
/** Per socket, the events received and the last `seq`. */
const perSocket: { count: number; last: number }[] = [];
const sockets: WebSocket[] = [];
const write = (value: unknown, done?: () => void) => process.stdout.write(JSON.stringify(value) + '\n', done);

function connect(): Promise<void> {
  return new Promise((resolve) => {
    const mine = { count: 0, last: -1 };
    perSocket.push(mine);
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/console/live?thread=${thread}`, { headers: { authorization: 'Bearer token-alice' } });
    ws.on('open', () => resolve());
    ws.on('message', (data) => {
      const event = JSON.parse(String(data));
      if (received === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[received++] = now() - event.data.sent_at;
      mine.count += 1;
      if (mine.last !== -1 && event.seq <= mine.last) repeats += 1;
      else if (mine.last !== -1 && event.seq > mine.last + 1) gaps += 1;
      if (event.seq > mine.last) mine.last = event.seq;
    });
    // A server that closes a socket (too slow, 1013) is counted, so a missing delivery has a reason.
    ws.on('close', () => (closed += 1));
    ws.on('error', (error) => {
      process.stderr.write(`${error.message}\n`);
      resolve();
    });
    sockets.push(ws);
  });
}

const started = now();
for (let i = 0; i < count; i += BATCH) await Promise.all(Array.from({ length: Math.min(BATCH, count - i) }, connect));
write({ open: sockets.filter((ws) => ws.readyState === WebSocket.OPEN).length, openMs: now() - started });

for await (const line of createInterface({ input: process.stdin })) {
  if (line === 'count') write({ received });
  if (line === 'report') {
    const sorted = latencies.subarray(0, received).sort();
    // Nearest rank, as bench/stats.ts, over a typed array (2,000,000 deliveries at 10,000 sockets).
    const at = (q: number) => (received === 0 ? 0 : sorted[Math.min(received - 1, Math.max(0, Math.ceil(q * received) - 1))]!);
    const counts = perSocket.map((socket) => socket.count);
    const fewest = counts.length === 0 ? 0 : Math.min(...counts);
    const most = counts.length === 0 ? 0 : Math.max(...counts);
    const summary = { received, closed, p50: at(0.5), p99: at(0.99), max: at(1), fewest, most, repeats, gaps };
    for (const ws of sockets) ws.terminate();
    write(summary, () => process.exit(0));
  }
}
