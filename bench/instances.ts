import { cpus, hostname, totalmem } from 'node:os';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { F, fixtureWorld } from '../test/support/fixture-world.ts';
import { createScratchDatabase } from '../test/support/scratch-database.ts';
import { child, STEP_MS } from './child.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';

/** Sockets in all, split evenly over the two client processes (and, with two instances, over both). */
const SOCKETS = Number(process.env.BENCH_INSTANCE_SOCKETS ?? 1000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);
/** Rounds of one instance then two (A B A B); each round is a row per instance of the table. */
const ROUNDS = Number(process.env.BENCH_INSTANCE_ROUNDS ?? 3);
/** The goal of issue 28: with two instances, p50 and p99 within 1.5× of one instance's. */
const GOAL = 1.5;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.now();

interface ClientReport {
  readonly received: number;
  readonly closed: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly fewest: number;
  readonly most: number;
  readonly repeats: number;
  readonly gaps: number;
}

interface Row extends ClientReport {
  readonly setup: 'one instance' | 'two instances';
  readonly round: number;
  /** Where this row's sockets are: A publishes; B hears A's events through PostgreSQL. */
  readonly instance: 'A' | 'B';
  readonly sockets: number;
  readonly publishMs: number;
  /** CPU time of the instance these sockets are on, from just before publishing to the last delivery. */
  readonly instanceCpuMs: number;
}

/**
 * One round: instance A (and B for `two instances`) started on the database, two client processes
 * of SOCKETS/2 sockets each (both on A for one instance; one on A and one on B for two), EVENTS
 * published on A, each client's latencies and per-socket order read back.
 */
async function round(setup: Row['setup'], index: number, url: string): Promise<Row[]> {
  const instances = [child([new URL('./instance-process.ts', import.meta.url).pathname, url, String(SOCKETS)], `${setup} A`)];
  if (setup === 'two instances') instances.push(child([new URL('./instance-process.ts', import.meta.url).pathname, url, String(SOCKETS)], `${setup} B`));
  const clients: ReturnType<typeof child>[] = [];
  try {
    const ports = await Promise.all(instances.map(async (instance) => (await instance.ask<{ port: number }>(null)).port));
    const placed: Row['instance'][] = setup === 'one instance' ? ['A', 'A'] : ['A', 'B'];
    const half = SOCKETS / 2;
    for (const at of placed) {
      clients.push(child([new URL('./live-clients.ts', import.meta.url).pathname, String(ports[at === 'A' ? 0 : 1]), String(half), F.root], `${setup} clients on ${at}`));
    }
    const opened = await Promise.all(clients.map((client) => client.ask<{ open: number }>(null)));
    for (const { open } of opened) if (open !== half) throw new Error(`${setup}: ${open} of ${half} sockets opened`);
    await sleep(500);
    const cpu = () => Promise.all(instances.map(async (instance) => (await instance.ask<{ cpuMs: number }>('cpu')).cpuMs));
    const cpuBefore = await cpu();
    const { publishMs } = await instances[0]!.ask<{ publishMs: number }>(`publish ${EVENTS}`);
    // Until every delivery arrived, or none arrived for 2 s, or the bound passed.
    const expected = SOCKETS * EVENTS;
    const deadline = now() + STEP_MS;
    let last = -1;
    let quietSince = now();
    for (;;) {
      const counts = await Promise.all(clients.map((client) => client.ask<{ received: number }>('count', 10_000)));
      const received = counts.reduce((sum, count) => sum + count.received, 0);
      if (received !== last) [last, quietSince] = [received, now()];
      if (received >= expected || now() - quietSince > 2000 || now() > deadline) break;
      await sleep(200);
    }
    const cpuAfter = await cpu();
    const reports = await Promise.all(clients.map((client) => client.ask<ClientReport>('report', 30_000)));
    const used = (at: Row['instance']) => cpuAfter[at === 'A' ? 0 : 1]! - cpuBefore[at === 'A' ? 0 : 1]!;
    const rows = reports.map((report, i): Row => ({ setup, round: index, instance: placed[i]!, sockets: half, publishMs, instanceCpuMs: used(placed[i]!), ...report }));
    for (const row of rows) {
      console.log(`instances ${setup} round ${index} on ${row.instance}: ${row.received}/${half * EVENTS} deliveries, p50 ${fixed(row.p50, 2)} ms, p99 ${fixed(row.p99, 2)} ms, repeats ${row.repeats}, gaps ${row.gaps}`);
    }
    return rows;
  } finally {
    for (const client of clients) client.process.kill();
    await Promise.all(instances.map(async (instance) => {
      await instance.ask('close', 10_000).catch(() => instance.process.kill());
    }));
  }
}

const median = (values: number[]) => {
  const sorted = [...values].sort((x, y) => x - y);
  const middle = sorted.length / 2;
  return sorted.length % 2 === 1 ? sorted[Math.floor(middle)]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};
const verdict = (r: number) => (r <= GOAL ? `${fixed(r, 2)}× (met)` : `**${fixed(r, 2)}× (missed)**`);
/** Every socket got every event exactly once, in order. */
const exact = (row: Row) => row.fewest === EVENTS && row.most === EVENTS && row.repeats === 0 && row.gaps === 0 && row.received === row.sockets * EVENTS;

/**
 * Two service instances on one PostgreSQL database of their own (a scratch database on
 * `BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`), SOCKETS live sockets split across both, events
 * published on one; beside one instance holding every socket, in alternating rounds of one run.
 * Writes the instances section of docs/benchmarks.md.
 */
export async function instancesBench(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  if (!url) {
    console.log('instances: skipped (no BENCH_DATABASE_URL or TEST_DATABASE_URL)');
    return;
  }
  const scratch = await createScratchDatabase(url, 'console_bench_instances');
  const rows: Row[] = [];
  const failed: string[] = [];
  try {
    const seed = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1 });
    await seed.importWorld(fixtureWorld());
    await seed.close();
    for (let i = 1; i <= ROUNDS; i++) {
      for (const setup of ['one instance', 'two instances'] as const) {
        try {
          rows.push(...(await round(setup, i, scratch.url)));
        } catch (error) {
          failed.push(`${setup}, round ${i}: ${(error as Error).message}`);
        }
      }
    }
  } finally {
    await scratch.drop();
  }

  // Deliveries made by the instance a row's sockets are on (one instance: both rows' sockets are A's).
  const deliveriesOn = (row: Row) => rows.filter((other) => other.setup === row.setup && other.round === row.round && other.instance === row.instance).reduce((sum, other) => sum + other.received, 0);
  const table = rows.map((row) =>
    `| ${row.round} | ${row.setup} | ${row.instance} | ${row.sockets} | ${fixed(row.p50, 2)} | ${fixed(row.p99, 2)} | ${fixed(row.max, 2)} | ${row.received.toLocaleString('en')} / ${(row.sockets * EVENTS).toLocaleString('en')} | ${exact(row) ? 'yes' : `**no** (fewest ${row.fewest}, most ${row.most}, repeats ${row.repeats}, gaps ${row.gaps})`}${row.closed > 0 ? `, ${row.closed} closed by the server` : ''} | ${fixed(row.publishMs, 0)} | ${fixed((row.instanceCpuMs * 1000) / deliveriesOn(row), 1)} |`,
  );
  // Each figure: the median over rounds of each row's figure (a row is one client process's sockets).
  const figure = (pick: (row: Row) => boolean, value: (row: Row) => number) => median(rows.filter(pick).map(value));
  const one = (row: Row) => row.setup === 'one instance';
  const two = (at: Row['instance']) => (row: Row) => row.setup === 'two instances' && row.instance === at;
  const ratios: string[] = [];
  let met = rows.some(one) && rows.some(two('B'));
  for (const at of ['A', 'B'] as const) {
    if (!rows.some(two(at)) || !rows.some(one)) continue;
    const p50 = figure(two(at), (r) => r.p50) / figure(one, (r) => r.p50);
    const p99 = figure(two(at), (r) => r.p99) / figure(one, (r) => r.p99);
    if (p50 > GOAL || p99 > GOAL) met = false;
    ratios.push(`| ${at === 'A' ? 'A (publishes)' : 'B (through PostgreSQL)'} | ${fixed(figure(two(at), (r) => r.p50), 2)} | ${fixed(figure(two(at), (r) => r.p99), 2)} | ${verdict(p50)} | ${verdict(p99)} |`);
  }
  const allExact = rows.length > 0 && rows.every(exact);

  writeSection('instances', `
## Two instances on one PostgreSQL: live fan-out across instances

Each round starts service instances as processes of their own (bench/instance-process.ts: MikroORM
storage with its own pool, the PostgreSQL event bus with its own LISTEN connection, the real
composition root) on one scratch database, then two client processes (bench/live-clients.ts) of
${SOCKETS / 2} sockets each on the fixture's root thread. **one instance**: both client processes on A.
**two instances**: one on A, one on B. ${EVENTS} events are stored and published on A in bursts of 10
every 5 ms; A's sockets get them from A's in-process bus, B's through PostgreSQL (NOTIFY carrying the
event, adapters/postgres/event-bus.ts). Latency runs from just before the event is stored to its
arrival in a client, over every delivery of that client process; an instance's CPU time (user and
system, from just before publishing to the last delivery) is divided by the deliveries it made, a figure
the machine's load barely moves. Each client checks, per socket,
that the \`seq\`s arrive one after the other: no repeat, no gap, and every socket got all ${EVENTS}.
One instance, then two, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} (A B A B), in one run; each step bounded in time. On
${hostname()} (${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30, 0)} GiB), instances, clients and PostgreSQL on one machine.

| round | setup | sockets on | sockets | p50 ms | p99 ms | max ms | delivered | each event once, in order | publish ms | instance CPU µs / delivery |
|---|---|---|---|---|---|---|---|---|---|---|
${table.join('\n')}

Two instances ÷ one instance, each the median over rounds (one instance: both of its client
processes; goal: p50 and p99 ≤ ${GOAL}×), one-instance figures p50 ${rows.some(one) ? fixed(figure(one, (r) => r.p50), 2) : 'n/a'} ms, p99 ${rows.some(one) ? fixed(figure(one, (r) => r.p99), 2) : 'n/a'} ms:

| sockets on | p50 ms | p99 ms | p50 ratio | p99 ratio |
|---|---|---|---|---|
${ratios.join('\n')}
${failed.length > 0 ? `\nNot measured: ${failed.join('; ')}.\n` : ''}
${met && allExact ? 'The goal is met: within ' + GOAL + '× on both instances, every event delivered once and in order on every socket.' : `The goal is **missed**${allExact ? '' : ' (not every event was delivered exactly once, in order)'}.`}

Reproduce with \`BENCH_ONLY=instances npm run bench\` (\`TEST_DATABASE_URL\` or \`BENCH_DATABASE_URL\` names the
server; a database of its own is created and dropped; \`BENCH_INSTANCE_SOCKETS\`, \`BENCH_EVENTS\`,
\`BENCH_INSTANCE_ROUNDS\` change the load).
`);
}
