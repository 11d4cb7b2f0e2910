import { cpus, hostname, loadavg, totalmem } from 'node:os';
import { loadTool, mean } from './load.ts';
import { readsSideBySide, type ReadMeasured } from './reads-side.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Issue 28's goal for the thread read and the messages page: the project at 0.9× of its bare baseline or better. */
const GOAL = 0.9;

/** The command this run was, with the database variable it used (a password never shown). */
function reproduce(): string {
  const vars = ['BENCH_ONLY', 'BENCH_ROUNDS', 'BENCH_SECONDS', 'BENCH_CONNECTIONS'].flatMap((name) => (process.env[name] ? [`${name}=${process.env[name]}`] : []));
  for (const name of ['BENCH_DATABASE_URL', 'TEST_DATABASE_URL']) {
    const value = process.env[name];
    if (value === undefined || value === '') continue;
    const url = new URL(value);
    if (url.password !== '') url.password = '…';
    return [`${name}=${url.toString()}`, ...vars, 'npm run bench'].join(' ');
  }
  return [...vars, 'npm run bench'].join(' ');
}

const rate = (value: number): string => Math.round(value).toLocaleString('en');
const micros = (value: number): string => fixed(value, 0);
const load = (): string => loadavg().map((v) => fixed(v, 2)).join(', ');

/**
 * Issue 28: the thread read and the messages page over HTTP on the MikroORM storage, each beside a bare
 * `node:http` + `pg` server running the same statements (reads-side.ts), in alternating rounds; writes
 * the `reads` section with the rates, their ratio, and this process's CPU time per request on each side.
 */
export async function readsBench(): Promise<void> {
  const tool = await loadTool();
  const startLoad = load();
  const reads = await readsSideBySide(tool, { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS });
  const where = reads.database.startsWith('PostgreSQL') ? ' on PostgreSQL' : ' on PGlite';
  const missed: string[] = [];
  const row = (m: ReadMeasured): string => {
    const ratio = mean(m.project) / mean(m.bare);
    const met = ratio >= GOAL;
    if (!met) missed.push(m.path);
    const cpu = mean(m.projectCpu) - mean(m.bareCpu);
    console.log(`${m.path}${where}: project ${rate(mean(m.project))} req/s, bare ${rate(mean(m.bare))} req/s, ratio ${fixed(ratio, 2)}× (goal ≥ ${GOAL}×: ${met ? 'met' : 'MISSED'}); CPU per request ${micros(mean(m.projectCpu))} µs vs ${micros(mean(m.bareCpu))} µs`);
    return `| ${m.path}${where} | ${m.request} | ${rate(mean(m.project))} (${m.project.map(rate).join(', ')}) | ${rate(mean(m.bare))} (${m.bare.map(rate).join(', ')}) | **${fixed(ratio, 2)}×** | ≥ ${GOAL}× ${met ? 'met' : '**missed**'} | ${micros(mean(m.projectCpu))} (${m.projectCpu.map(micros).join(', ')}) | ${micros(mean(m.bareCpu))} (${m.bareCpu.map(micros).join(', ')}) | +${micros(cpu)} |`;
  };
  const rows = reads.results.map(row);
  const cpu = cpus();

  writeSection('reads', `
## Reads on PostgreSQL beside a bare \`node:http\` + \`pg\` server (issues 11 and 28)

One run on ${hostname()} (${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version},
${process.platform} ${process.arch}), load average ${load()} at the end (${startLoad} at the start), everything on loopback.
Load from ${tool.name}: \`${tool.describe(CONNECTIONS, SECONDS)}\`, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${SECONDS} s per side
alternating project, bare, project, bare, … after a 1 s untimed warm-up of each; a round with any non-2xx answer
or socket error fails the bench. Both sides run in the bench's process (never loaded at the same time), the
database in its own; the load generator in a process of its own.

- The **project** is the real composition root (\`createApp\` on \`node:http\`) over the MikroORM storage,
  logging at the default level (an access line per request) into a sink that drops the bytes; every request
  authenticated by its bearer token and checked for access to the thread.
- The **baseline** is a bare \`node:http\` + \`pg\` server (a pool of the service's size) running, per request,
  the very statements the service sent for that request (caught on the knex client), and answering the last
  one's rows as JSON with the same headers. Database: ${reads.database}; one thread of alice's with 200 messages.
- **CPU per request** is this process's user + system time over a round divided by the requests answered in
  it (µs): the service's or the baseline's own work, the database's not included. On a shared machine it moves
  far less than the rates do.

Requests per second, mean of the rounds (each round in brackets), and CPU per request:

| path | request | project req/s | bare req/s | ratio | goal | project CPU µs/req | bare CPU µs/req | project − bare |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${missed.length === 0 ? 'Both goals are met in this run.' : `Missed in this run: ${missed.join(', ')}.`} Where the difference goes: "What the reads cost per request" below.

Reproduce with \`${reproduce()}\` (this section alone with \`BENCH_ONLY=reads\`; the reads run on embedded
PGlite when neither \`BENCH_DATABASE_URL\` nor \`TEST_DATABASE_URL\` is set; \`BENCH_ROUNDS\` (3 by default here),
\`BENCH_SECONDS\`, \`BENCH_CONNECTIONS\` change the load).
`);
}
