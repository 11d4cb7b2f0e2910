import { cpus, hostname, totalmem } from 'node:os';
import { artifactSideBySide } from './artifact-side.ts';
import { coldStart } from './cold-start.ts';
import { loadTool, mean } from './load.ts';
import { writeSection } from './report.ts';
import type { Measured } from './sandbox-side.ts';
import { fixed } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Issue 11's goal for every HTTP path: the project at 0.8× of its bare baseline or better. */
const HTTP_GOAL = 0.8;
/** Issue 11's goal for the artifact read: at most 1.2× the time of the MCP fetch alone, so a rate of 1/1.2 of it. */
const ARTIFACT_GOAL = 1 / 1.2;
/** Connections on the artifact read: each request is a whole MCP exchange with the provider (three HTTP requests). */
const ARTIFACT_CONNECTIONS = Number(process.env.BENCH_ARTIFACT_CONNECTIONS ?? 8);
/** Issue 11's goal for the second start to /readyz. */
const SECOND_START_GOAL_MS = 1500;

/** The command this run was, with the database variable it used (a password never shown). */
function reproduce(): string {
  for (const name of ['BENCH_DATABASE_URL', 'TEST_DATABASE_URL']) {
    const value = process.env[name];
    if (value === undefined || value === '') continue;
    const url = new URL(value);
    if (url.password !== '') url.password = '…';
    return `${name}=${url.toString()} npm run bench`;
  }
  return 'npm run bench';
}

const rate = (value: number): string => Math.round(value).toLocaleString('en');

/**
 * Issue 11, first slice: each HTTP hot path beside its bare baseline in one run (A B A B), and the
 * cold start to /readyz; prints the ratios and writes the `side-by-side` section. The sandbox page and
 * script are measured beside their bare baseline, Fastify and Hono in the edge section (edge-peers.ts).
 */
export async function sideBySideBench(): Promise<void> {
  const tool = await loadTool();
  const load = { rounds: ROUNDS, seconds: SECONDS, connections: CONNECTIONS };
  const artifact = await artifactSideBySide(tool, { ...load, connections: ARTIFACT_CONNECTIONS });
  const start = await coldStart();

  const missed: string[] = [];
  const row = (m: Measured, where: string, goal = HTTP_GOAL, shown = `≥ ${HTTP_GOAL}×`): string => {
    const ratio = mean(m.project) / mean(m.bare);
    const met = ratio >= goal;
    if (!met) missed.push(m.path);
    console.log(`${m.path}${where}: project ${rate(mean(m.project))} req/s, bare ${rate(mean(m.bare))} req/s, ratio ${fixed(ratio, 2)}× (goal ${shown}: ${met ? 'met' : 'MISSED'})`);
    return `| ${m.path}${where} | ${m.request} | ${rate(mean(m.project))} (${m.project.map(rate).join(', ')}) | ${rate(mean(m.bare))} (${m.bare.map(rate).join(', ')}) | **${fixed(ratio, 2)}×** | ${shown} ${met ? 'met' : '**missed**'} |`;
  };
  const rows = [
    row(artifact, ' (memory storage)', ARTIFACT_GOAL, `≥ ${fixed(ARTIFACT_GOAL, 2)}× (time ≤ 1.2×)`),
  ];
  const secondMet = start.second < SECOND_START_GOAL_MS;
  if (!secondMet) missed.push('second start');
  console.log(`cold start to /readyz (embedded): first ${fixed(start.first / 1000, 2)} s, second ${fixed(start.second / 1000, 2)} s (goal < 1.5 s: ${secondMet ? 'met' : 'MISSED'}), PGlite reopen alone ${fixed(start.pgliteReopen / 1000, 2)} s`);
  const cpu = cpus();

  writeSection('side-by-side', `
## Side by side: each HTTP hot path beside a bare baseline (issue 11)

One run on ${hostname()} (${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version},
${process.platform} ${process.arch}), everything on loopback. Load from ${tool.name}: \`${tool.describe(CONNECTIONS, SECONDS)}\`, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'}
of ${SECONDS} s per side alternating project, bare, project, bare, after a 1 s untimed warm-up of each;
a round with any non-2xx answer or socket error fails the bench. The load generator runs in a process of
its own; the service and its baseline share the bench's process, never loaded at the same time. On two
cores the load generator takes one of them, so the bare figures are a floor of what the machine can do, not
its ceiling (a bare server may be limited by ${tool.name} itself).

- The **project** is the real composition root (\`createApp\` on \`node:http\`), logging at the default level
  into a sink that drops the bytes.
- The artifact read's **baseline** is the MCP resource fetch alone: a bare \`node:http\` server whose every
  answer is one call of the same fetch adapter (connect, \`resources/list\`, \`resources/read\` over
  Streamable HTTP) against the same provider, a real MCP SDK server in a process of its own
  (bench/mcp-provider.ts); ${ARTIFACT_CONNECTIONS} connections on both sides. Its goal is a time per read within 1.2× of the
  fetch's, so a rate of at least 0.83× of it.

The sandbox page and script are measured in the edge section below, beside a bare server, Fastify and
Hono, each in a process of its own; the thread read and the messages page in the reads section above.

Requests per second, mean of the rounds (each round in brackets):

| path | request | project | bare baseline | ratio | goal |
|---|---|---|---|---|---|
${rows.join('\n')}

Cold start to \`/readyz\`, embedded storage, \`npm start\` in a child process on a fresh DATA_DIR (the
first start creates the database; the second reopens it):

| start | to /readyz | baseline | goal |
|---|---|---|---|
| first | ${fixed(start.first / 1000, 2)} s | | |
| second | ${fixed(start.second / 1000, 2)} s | PGlite reopen of the same directory alone, process spawn included: ${fixed(start.pgliteReopen / 1000, 2)} s | < 1.5 s ${secondMet ? 'met' : '**missed**'} |

${missed.length === 0 ? 'Every goal is met in this run.' : `Missed in this run: ${missed.join(', ')}. Why, from the profiles: "What the profiles showed" below.`}

Reproduce with \`${reproduce()}\` (\`BENCH_ROUNDS\`, \`BENCH_SECONDS\`, \`BENCH_CONNECTIONS\` change the load; wrk is used when on the PATH, else
autocannon is installed into \`$TMPDIR/console-bench-autocannon-8\`).
`);
}
