// A child process of the two-instance benchmark (bench/instances.ts): one service instance on the
// PostgreSQL database named by argv[2], as a deployment runs it: MikroORM storage with its own pool,
// the PostgreSQL event bus with its own LISTEN connection, the real composition root on loopback.
//
// Protocol on stdin/stdout, one JSON line each: `{port}` once it listens; on `publish N`, N events
// stored on the fixture's root thread and published on this instance's bus (in bursts of 10 every
// 5 ms, as bench/live-fanout.ts does), then `{publishMs}`; on `cpu`, `{cpuMs}` (user and system time of
// the process so far); on `close`, `{closed: true}` and it exits.
import { createInterface } from 'node:readline';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { F } from '../test/support/fixture-world.ts';
import { startBenchService } from './live-service.ts';

const url = process.argv[2]!;
const sockets = Number(process.argv[3]);
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (value: unknown, done?: () => void) => process.stdout.write(JSON.stringify(value) + '\n', done);

// As the service opens PostgreSQL (DATABASE_PREPARED_STATEMENTS, named by default).
const storage = await createMikroOrmStorage({ clientUrl: url, pool: 4, namedStatements: process.env.DATABASE_PREPARED_STATEMENTS !== 'unnamed' });
const bus = await createPostgresEventBus({
  url, events: storage.events, onError: (error) => process.stderr.write(`event bus: ${String(error)}\n`),
  local: createMemoryEventBus({ onListenerError: (error) => process.stderr.write(`event bus: ${String(error)}\n`) }),
});
// Every socket is alice's: the per-user cap is raised past the count, as the connection cap is.
const service = await startBenchService(
  { CONSOLE_STORAGE: 'postgres', DATABASE_URL: url, LOG_LEVEL: 'silent', MAX_CONNECTIONS: String(sockets + 1024), LIVE_SOCKETS_PER_USER: String(sockets + 1024) },
  storage,
  bus,
);
write({ port: service.port });

for await (const line of createInterface({ input: process.stdin })) {
  const [command, argument] = line.split(' ');
  if (command === 'publish') {
    const started = now();
    for (let i = 0; i < Number(argument); i++) {
      // As a run publishes: stored in the EventLog, then on the bus; `sent_at` taken before both.
      const event = await storage.events.append(F.root, 'message', { delta: `event ${i}`, sent_at: now() });
      await bus.publish(event);
      if (i % 10 === 9) await sleep(5);
    }
    write({ publishMs: now() - started });
  }
  if (command === 'cpu') {
    const { user, system } = process.cpuUsage();
    write({ cpuMs: (user + system) / 1000 });
  }
  if (command === 'close') {
    await service.close();
    await bus.close();
    await storage.close();
    write({ closed: true }, () => process.exit(0));
  }
}
