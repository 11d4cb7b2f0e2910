// A child process of the schedule-lag benchmark (bench/schedule-lag.ts): one service instance on the PostgreSQL
// database named by argv[2], as a deployment runs it (MikroORM storage with its own pool, the PostgreSQL event bus,
// the real composition root with its scheduler on loopback), whose agent turns end at once: the figure is the
// scheduler's and the directive path's, not an agent's.
//
// Protocol on stdin/stdout, one JSON line each: `{port}` once it listens; on `close`, `{closed: true}` and it exits.
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { createMemoryEventBus } from '../adapters/memory/event-bus.ts';
import { createPostgresEventBus } from '../adapters/postgres/event-bus.ts';
import type { AgentRunner } from '../ports/agent-runner.ts';
import { startBenchService } from './live-service.ts';

const url = process.argv[2]!;
const write = (value: unknown, done?: () => void) => process.stdout.write(JSON.stringify(value) + '\n', done);

/** A turn that ends as soon as it starts, in a session of its own, with one line of text. */
const instant: AgentRunner = {
  async runTurn(request) {
    const sessionId = request.sessionId ?? randomUUID();
    await request.onSession(sessionId);
    await request.onUpdate({ kind: 'text', text: 'done' });
    return { sessionId, stopReason: 'end_turn' };
  },
  setMode: async () => null,
  steer: async () => 'unsupported',
  close: async () => {},
};

// As src/open-database.ts opens PostgreSQL: the pool the ORM gives by default.
// As the service opens PostgreSQL (DATABASE_PREPARED_STATEMENTS, named by default).
const storage = await createMikroOrmStorage({ clientUrl: url, namedStatements: process.env.DATABASE_PREPARED_STATEMENTS !== 'unnamed' });
const bus = await createPostgresEventBus({
  url, events: storage.events, onError: (error) => process.stderr.write(`event bus: ${String(error)}\n`),
  local: createMemoryEventBus({ onListenerError: (error) => process.stderr.write(`event bus: ${String(error)}\n`) }),
});
const service = await startBenchService(
  { CONSOLE_STORAGE: 'postgres', DATABASE_URL: url, LOG_LEVEL: 'warn', DIRECTIVES_PER_MINUTE: '100000', METRICS_TOKEN: process.env.BENCH_METRICS_TOKEN ?? '' },
  storage,
  bus,
  // Each agent offers what its world entry lists, as a real one that agrees with the world would.
  { runner: instant, offers: async (agent) => ({ kind: 'offered', offer: { modes: agent.permission_modes ?? [], currentMode: agent.default_permission_mode, models: agent.models ?? [], efforts: agent.efforts ?? [] } }) },
);
write({ port: service.port });

for await (const line of createInterface({ input: process.stdin })) {
  if (line.trim() === 'close') {
    await service.close();
    await bus.close();
    await storage.close();
    write({ closed: true }, () => process.exit(0));
  }
}
