import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import pg from 'pg';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { runStatement } from '../adapters/mikro-orm/sql.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { fixtureWorld } from '../test/support/fixture-world.ts';
import { ask } from '../test/support/http.ts';
import { testId } from '../test/support/ids.ts';
import { createScratchDatabase } from '../test/support/scratch-database.ts';
import { recordedHeaders, startBare } from './bare-http.ts';
import { startBenchService } from './bench-service.ts';
import type { LoadTool, Target } from './load.ts';
import type { Measured } from './sandbox-side.ts';

const MESSAGES = 200;
const AUTH = { authorization: 'Bearer token-alice' };

/** A read's rounds, with the bench process's CPU time per request in each (µs; the database's own is not in it). */
export interface ReadMeasured extends Measured {
  readonly projectCpu: number[];
  readonly bareCpu: number[];
}

/** Where the reads ran, as the section names it. */
export interface ReadsMeasured {
  readonly database: string;
  readonly results: ReadMeasured[];
}

/**
 * One load run, with the CPU time this process spent per answered request over it. Both sides run in
 * this process, never loaded at the same time, so the CPU is the side's (and wrk's is not in it): a
 * figure a busy machine moves much less than the rate.
 */
async function timed(tool: LoadTool, target: Target, connections: number, seconds: number): Promise<{ rate: number; cpu: number }> {
  const before = process.cpuUsage();
  const calls = systemCalls();
  const start = performance.now();
  const rate = await tool.run(target, connections, seconds);
  const used = process.cpuUsage(before);
  const elapsed = (performance.now() - start) / 1000;
  const after = systemCalls();
  if (process.env.BENCH_READS_SYSCALLS && calls !== null && after !== null) {
    const requests = rate * elapsed;
    console.log(`  ${target.url}: ${(after.reads - calls.reads) / requests} read and ${(after.writes - calls.writes) / requests} write system calls per request, user ${used.user / requests} µs, system ${used.system / requests} µs`);
  }
  return { rate, cpu: (used.user + used.system) / (rate * elapsed) };
}

/** This process's read and write system calls so far (Linux's /proc/self/io), or null elsewhere. */
function systemCalls(): { reads: number; writes: number } | null {
  try {
    const text = readFileSync('/proc/self/io', 'utf8');
    return { reads: Number(/syscr: (\d+)/.exec(text)![1]), writes: Number(/syscw: (\d+)/.exec(text)![1]) };
  } catch {
    return null;
  }
}

/**
 * With BENCH_READS_PROFILE=<dir>, one more round of each side after the measured ones, under V8's CPU
 * profiler (node:inspector, in this process), written to <dir>/<side>-<read>.cpuprofile: both sides pay
 * the profiler alike, and the database's and wrk's processes are not in it.
 */
async function profiled(dir: string, name: string, run: () => Promise<unknown>): Promise<void> {
  const session = new Session();
  session.connect();
  const post = (method: string, params?: object) =>
    new Promise<unknown>((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  try {
    await run();
  } finally {
    const { profile } = (await post('Profiler.stop')) as { profile: unknown };
    session.disconnect();
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `${name.replace(/[^a-z0-9]+/gi, '-')}.cpuprofile`), JSON.stringify(profile));
  }
}

/** The project and its baseline in turn (A B A B …) after a short untimed warm-up of each, as load.ts's `sideBySide`, with CPU per request. */
async function alternate(tool: LoadTool, project: Target, bare: Target, options: { rounds: number; seconds: number; connections: number; name: string }) {
  await tool.run(project, options.connections, 1);
  await tool.run(bare, options.connections, 1);
  const result = { project: [] as number[], bare: [] as number[], projectCpu: [] as number[], bareCpu: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    const a = await timed(tool, project, options.connections, options.seconds);
    result.project.push(a.rate);
    result.projectCpu.push(a.cpu);
    const b = await timed(tool, bare, options.connections, options.seconds);
    result.bare.push(b.rate);
    result.bareCpu.push(b.cpu);
  }
  const dir = process.env.BENCH_READS_PROFILE;
  if (dir) {
    await profiled(dir, `project-${options.name}`, () => tool.run(project, options.connections, options.seconds));
    await profiled(dir, `bare-${options.name}`, () => tool.run(bare, options.connections, options.seconds));
  }
  return result;
}

/**
 * A thread read and a messages page (50) over HTTP on the MikroORM storage, each beside a bare
 * `node:http` + `pg` server that runs the very statements the service sent for that request (caught
 * on the knex client once) and answers the last one's rows as JSON with the same headers.
 */
export async function readsSideBySide(tool: LoadTool, load: { rounds: number; seconds: number; connections: number }): Promise<ReadsMeasured> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const scratch = url ? await createScratchDatabase(url, 'console_bench') : null;
  const embedded = scratch === null ? await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR }) : null;
  const clientUrl = scratch?.url ?? embedded!.url;
  const pool = scratch !== null ? 4 : EMBEDDED_POOL_SIZE;
  const storage = await createMikroOrmStorage({ clientUrl, pool });
  const bare = new pg.Pool({ connectionString: clientUrl, max: pool });
  let closeService = async () => storage.close();
  try {
    const world = fixtureWorld();
    const threadId = testId(60_000_000);
    await storage.importWorld({ ...world, threads: [{ ...world.threads[0]!, id: threadId, messages: [], conversations: [] }] });
    const base = Date.parse('2026-01-01T00:00:00.000Z') + 70_000_000;
    await runStatement(storage.orm, `
      insert into messages (id, thread_id, role, text, artifact_id, created_at)
      select (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
             ?, 'user', 'message ' || i, null, to_timestamp((? + i) / 1000.0)
      from (select i, lpad(to_hex(? + i), 12, '0') as h from generate_series(1, ?) as i) s`, [threadId, base, base, MESSAGES]);
    await runStatement(storage.orm, 'analyze', []);
    const version = (await runStatement<{ server_version: string }>(storage.orm, 'show server_version', []))[0]!.server_version;

    let sent: { sql: string; bindings?: unknown[] }[] | null = null;
    storage.orm.em.getConnection().getKnex().client.on('query', (query: { sql: string; bindings?: unknown[] }) => sent?.push(query));
    const service = await startBenchService(storage);
    closeService = service.close;
    // The sweep at start is waited out, so the statements caught are the read's alone.
    await new Promise((resolve) => setTimeout(resolve, 500));

    const results: ReadMeasured[] = [];
    for (const { name, path } of [
      { name: 'thread read', path: `/api/console/threads/${threadId}` },
      { name: 'messages page (50)', path: `/api/console/threads/${threadId}/messages?limit=50` },
    ]) {
      sent = [];
      const answer = await ask(service.port, { path, headers: AUTH });
      const statements: string[] = sent.map((query) => {
        if ((query.bindings?.length ?? 0) !== 0) throw new Error(`a statement with bindings: ${query.sql}`);
        return query.sql;
      });
      sent = null;
      if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${answer.text}`);
      const headers = recordedHeaders(answer.headers);
      const server = await startBare((_req, res) => {
        void (async () => {
          let rows: unknown[] = [];
          for (const statement of statements) rows = (await bare.query(statement)).rows;
          res.writeHead(200, headers);
          res.end(JSON.stringify({ items: rows }));
        })().catch((error: unknown) => {
          res.writeHead(500);
          res.end(String(error));
        });
      });
      try {
        const measured = await alternate(
          tool,
          { url: `http://127.0.0.1:${service.port}${path}`, headers: AUTH },
          { url: `http://127.0.0.1:${server.port}${path}`, headers: AUTH },
          { ...load, name },
        );
        results.push({ path: name, request: `GET ${path.replace(threadId, '{id}')}, ${statements.length} statements`, ...measured });
      } finally {
        await server.close();
      }
    }
    return {
      database: scratch !== null ? `PostgreSQL ${version} (a scratch database, dropped after)` : `embedded PGlite (PostgreSQL ${version}); no BENCH_DATABASE_URL or TEST_DATABASE_URL was set`,
      results,
    };
  } finally {
    await bare.end();
    await closeService();
    await embedded?.close();
    await scratch?.drop();
  }
}
