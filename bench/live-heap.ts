// Heap snapshots of one side of the fan-out bench with N sockets open, to see what each socket holds:
//   node --expose-gc --no-flush-bytecode --import tsx bench/live-heap.ts service 1000 out.heapsnapshot
//   node --expose-gc --no-flush-bytecode --import tsx bench/live-heap.ts bare 1000 out.heapsnapshot
// writes out-before.heapsnapshot (no socket open, after the bench's warm-up of 20 sockets opened and
// closed) and out.heapsnapshot (N open), and prints the heap
// growth per socket. Compare the two in Chrome DevTools (Memory, Comparison), by constructor; then the
// service's against the bare side's. Not part of `npm run bench`: a tool for docs/benchmarks.md's account
// of what one live socket costs.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { writeHeapSnapshot } from 'node:v8';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createMemoryStorage } from '../adapters/memory/storage.ts';
import { F, fixtureWorld } from '../test/support/fixture-world.ts';
import { startBareBroadcast } from './live-bare.ts';
import { startBenchService } from './live-service.ts';

const [kind, count, out] = [process.argv[2], Number(process.argv[3] ?? 1000), process.argv[4] ?? `live-${process.argv[2]}.heapsnapshot`];
if ((kind !== 'service' && kind !== 'bare') || !Number.isInteger(count) || count < 1) {
  console.error('usage: bench/live-heap.ts service|bare <sockets> [out.heapsnapshot]');
  process.exit(2);
}
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error('run with --expose-gc');
const collect = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
};

const side =
  kind === 'service'
    ? await (async () => {
        const storage = createMemoryStorage();
        await storage.importWorld(fixtureWorld());
        const env = { LOG_LEVEL: 'silent', MAX_CONNECTIONS: String(count + 1024), LIVE_SOCKETS_PER_USER: String(count + 1024) };
        return startBenchService(env, storage, createMemoryEventBus());
      })()
    : await startBareBroadcast();
// The warm-up of the bench (bench/live-fanout.ts): a few sockets opened and closed before the first
// reading, so what the first sockets compile once is not counted as if every socket held it.
const clients = (n: number) =>
  spawn(process.execPath, ['--import', 'tsx', new URL('./live-clients.ts', import.meta.url).pathname, String(side.port), String(n), F.root], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
const warm = clients(20);
await createInterface({ input: warm.stdout! })[Symbol.asyncIterator]().next();
warm.kill();
await new Promise((resolve) => setTimeout(resolve, 1000));
await collect();
const before = process.memoryUsage().heapUsed;
writeHeapSnapshot(out.replace(/\.heapsnapshot$/, '') + '-before.heapsnapshot');
// The clients live in a child process (bench/live-clients.ts), as in the bench: only the server is in this heap.
const child = clients(count);
const opened = await createInterface({ input: child.stdout! })[Symbol.asyncIterator]().next();
console.log(`clients: ${String(opened.value)}`);
await new Promise((resolve) => setTimeout(resolve, 500));
await collect();
console.log(`${kind}, ${count} sockets: heap growth ${((process.memoryUsage().heapUsed - before) / count / 1024).toFixed(2)} KiB per socket`);
writeHeapSnapshot(out);
child.kill();
await side.close();
