import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { cpus, hostname } from 'node:os';
import { createInterface } from 'node:readline';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { F, fixtureWorld } from '../test/support/fixture-world.ts';
import { startService } from '../test/support/service.ts';
import { writeSection } from './report.ts';
import { fixed, quantile } from './stats.ts';

const SOCKETS = Number(process.env.BENCH_SOCKETS ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);
const now = () => performance.timeOrigin + performance.now();

/** Heap and RSS after a full collection (run with --expose-gc for a stable figure). */
async function memory(): Promise<{ heap: number; rss: number }> {
  for (let i = 0; i < 3; i++) {
    (globalThis as { gc?: () => void }).gc?.();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const usage = process.memoryUsage();
  return { heap: usage.heapUsed, rss: usage.rss };
}

/**
 * 1,000 live sockets on one thread (clients in a child process), events published the way a run
 * publishes them (stored in the EventLog, then published on the in-process bus); the latency from
 * publish to arrival in each client, and the server's memory per open socket.
 */
export async function liveFanoutBench(): Promise<void> {
  const storage = createMemoryStorage();
  await storage.importWorld(fixtureWorld());
  const bus = createMemoryEventBus();
  const service = await startService({ LOG_LEVEL: 'silent' }, { storage, bus });
  const child = spawn(process.execPath, ['--import', 'tsx', new URL('./live-clients.ts', import.meta.url).pathname, String(service.port), String(SOCKETS), F.root], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  try {
    const before = await memory();
    await lines.next(); // {open}: every socket is open
    await new Promise((resolve) => setTimeout(resolve, 500));
    const during = await memory();
    const started = now();
    for (let i = 0; i < EVENTS; i++) {
      const event = await storage.events.append(F.root, 'message', { delta: `event ${i}`, sent_at: now() });
      await bus.publish(event);
      // A run's pace: events come in bursts, not all at once.
      if (i % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const publishMs = now() - started;
    await new Promise((resolve) => setTimeout(resolve, 1500));
    child.stdin!.write('report\n');
    const { latencies } = JSON.parse(String((await lines.next()).value)) as { latencies: number[] };
    await once(child, 'exit');
    const sorted = latencies.sort((x, y) => x - y);
    const delivered = sorted.length;
    const perSocketHeap = (during.heap - before.heap) / SOCKETS;
    const perSocketRss = (during.rss - before.rss) / SOCKETS;
    writeSection('live-fanout', `
## Live socket fan-out: ${SOCKETS.toLocaleString('en')} sockets on one thread

${SOCKETS.toLocaleString('en')} websocket clients (in a child process) subscribed to one thread; ${EVENTS} events
stored in the EventLog and published on the in-process bus, in bursts of 10 every 5 ms (published in
${fixed(publishMs, 0)} ms). Latency is from just before the event is stored to its arrival in a client, over
all ${delivered.toLocaleString('en')} deliveries (${delivered === SOCKETS * EVENTS ? 'every event reached every socket' : `expected ${SOCKETS * EVENTS}`}).
Memory is the server process's growth with every socket open, after a full collection. On ${hostname()}
(${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}), server and clients on one machine.

| figure | value |
|---|---|
| delivery latency p50 | ${fixed(quantile(sorted, 0.5), 2)} ms |
| delivery latency p99 | ${fixed(quantile(sorted, 0.99), 2)} ms |
| delivery latency max | ${fixed(sorted.at(-1) ?? 0, 2)} ms |
| heap per socket | ${fixed(perSocketHeap / 1024, 1)} KiB |
| RSS per socket | ${fixed(perSocketRss / 1024, 1)} KiB |

Reproduce with \`npm run bench\` (\`BENCH_SOCKETS\`, \`BENCH_EVENTS\` change the load).
`);
    console.log(`live fan-out: ${delivered} deliveries, p50 ${fixed(quantile(sorted, 0.5), 2)} ms, p99 ${fixed(quantile(sorted, 0.99), 2)} ms, heap/socket ${fixed(perSocketHeap / 1024, 1)} KiB`);
  } finally {
    child.kill();
    await service.close();
  }
}
