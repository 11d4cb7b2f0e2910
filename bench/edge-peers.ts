import { execFileSync, fork, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, hostname, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sandboxUrl } from '../domain/sandbox-policy.ts';
import { ask, type Answer } from '../test/support/http.ts';
import { recordedHeaders } from './bare-http.ts';
import { loadTool, mean, type LoadTool, type Target } from './load.ts';
import type { PeerLog, RecordedAnswer } from './peers/protocol.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 2);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);
/** Issue 28's goal: the project at 1.0× of Fastify's and of Hono's rate, or better. */
const PEER_GOAL = 1.0;
/** Issue 11's goal beside the bare server. */
const BARE_GOAL = 0.8;

export const SIDES = ['project', 'fastify', 'hono', 'bare'] as const;
export type Side = (typeof SIDES)[number];
const SHOWN: Record<Side, string> = { project: 'project', fastify: 'Fastify 5', hono: 'Hono 4', bare: 'bare node:http' };
const LEVELS: readonly PeerLog[] = ['warn', 'default'];

/** One side in a process of its own, on a loopback port. */
interface Peer {
  readonly port: number;
  /** The process's CPU time so far, user plus system, in microseconds (NaN where there is no /proc). */
  readonly cpu: () => number;
  readonly close: () => Promise<void>;
}

const TICK_US = 1e6 / 100;

/** A process's CPU time from /proc (Linux; clock ticks of 10 ms), the same way for every side. */
function cpuOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * TICK_US;
  } catch {
    return Number.NaN;
  }
}

/** Stops a child: its IPC channel closed (the peers exit on it), else SIGTERM (the service drains), SIGKILL after 10 s. */
function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((done) => {
      if (child.exitCode !== null || child.signalCode !== null) return done();
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.once('exit', () => {
        clearTimeout(kill);
        done();
      });
      if (child.connected) child.disconnect();
      else child.kill('SIGTERM');
    });
}

/** A free loopback port, for the service (its sandbox origin is built from PORT). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * The service as `npm start` runs it: the compiled `dist/src/main.js` (scripts/build.mjs, rebuilt
 * when a source changed), memory storage, LOG_LEVEL as asked, its log on its stdout (/dev/null).
 */
async function startProject(log: PeerLog): Promise<Peer> {
  const root = fileURLToPath(new URL('..', import.meta.url));
  execFileSync(process.execPath, [join(root, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const port = await freePort();
  const profile = (process.env.BENCH_EDGE_PROFILE_SIDE ?? 'project') === 'project' ? process.env.BENCH_EDGE_PROFILE : undefined;
  const env: Record<string, string | undefined> = {
    ...process.env,
    CONSOLE_STORAGE: 'memory',
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: mkdtempSync(join(tmpdir(), 'console-bench-edge-')),
    // The load comes from one address, standing for many clients.
    MAX_CONNECTIONS_PER_CLIENT: '1000',
    MAX_CONNECTIONS: '4096',
  };
  if (log === 'warn') env.LOG_LEVEL = 'warn';
  else delete env.LOG_LEVEL;
  const child = spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  const close = stopper(child);
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
    const ready = await ask(port, { path: '/readyz', headers: { host: `localhost:${port}` } }).then((a) => a.status === 200, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await close();
      throw new Error(`the service did not get ready in 30 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return { port, cpu: () => cpuOf(child.pid), close };
}

export function startPeer(side: Side, log: PeerLog, answers: readonly RecordedAnswer[]): Promise<Peer> {
  if (side === 'project') return startProject(log);
  const profile = side === process.env.BENCH_EDGE_PROFILE_SIDE ? process.env.BENCH_EDGE_PROFILE : undefined;
  const child: ChildProcess = fork(new URL(`./peers/${side}.ts`, import.meta.url), {
    execArgv: ['--import', 'tsx', ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])],
    env: { ...process.env, PEER_LOG: log, PEER_ANSWERS: JSON.stringify(answers) },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${side} did not start in 30 s`));
    }, 30_000);
    child.once('exit', (code) => reject(new Error(`${side} exited with ${code} before listening`)));
    child.once('message', (message: { port: number }) => {
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({ port: message.port, cpu: () => cpuOf(child.pid), close: stopper(child) });
    });
  });
}

/** What must be the same on every side: status, body bytes, and every header but the per-answer ones and the request id's value. */
function sameAnswer(side: Side, expected: RecordedAnswer, answer: Answer, body: Buffer): void {
  const id = answer.headers['x-request-id'];
  if (side !== 'bare' && (typeof id !== 'string' || id === '')) throw new Error(`${side} sent no request id on ${expected.path}`);
  if (answer.status !== expected.status) throw new Error(`${side} answered ${answer.status} on ${expected.path}, not ${expected.status}`);
  if (!body.equals(Buffer.from(expected.body, 'base64'))) throw new Error(`${side} answered other bytes on ${expected.path}`);
  const headers = recordedHeaders(answer.headers) as Record<string, string>;
  delete headers['x-request-id'];
  const want = JSON.stringify(Object.entries(expected.headers).sort());
  const got = JSON.stringify(Object.entries(headers).sort());
  if (want !== got) throw new Error(`${side} answered other headers on ${expected.path}:\n${got}\nnot\n${want}`);
}

/** One request's answer, its body as bytes. */
async function fetchBytes(port: number, path: string, host: string): Promise<{ answer: Answer; body: Buffer }> {
  const answer = await ask(port, { path, headers: { host } });
  return { answer, body: Buffer.from(answer.text, 'utf8') };
}

interface PathFigures {
  readonly name: string;
  readonly request: string;
  readonly rates: Record<Side, number[]>;
  /** CPU time of the side's process per request answered, microseconds, per round. */
  readonly cpu: Record<Side, number[]>;
}

/** Every side at one log level: each path loaded side after side, `rounds` times, after a 1 s warm-up of each. */
async function atLevel(tool: LoadTool, log: PeerLog): Promise<PathFigures[]> {
  const project = await startPeer('project', log, []);
  const peers: Partial<Record<Side, Peer>> = { project };
  try {
    const host = `sandbox.localhost:${project.port}`;
    const policy = {
      parentOrigin: `http://localhost:${project.port}`,
      csp: { resourceDomains: ['https://cdn.example.com'], connectDomains: ['https://api.example.com'], frameDomains: [], baseUriDomains: [] },
    };
    const page = new URL(sandboxUrl(`http://${host}`, policy));
    const paths = [
      { name: 'sandbox proxy page', target: page.pathname + page.search, path: page.pathname, shown: '/artifacts/sandbox?policy=…' },
      { name: 'sandbox proxy script', target: '/artifacts/sandbox.js', path: '/artifacts/sandbox.js', shown: '/artifacts/sandbox.js' },
    ];
    const answers: RecordedAnswer[] = [];
    for (const { name, target, path } of paths) {
      const { answer, body } = await fetchBytes(project.port, target, host);
      if (answer.status !== 200) throw new Error(`${name} answered ${answer.status}: ${answer.text}`);
      const headers = recordedHeaders(answer.headers) as Record<string, string>;
      delete headers['x-request-id'];
      answers.push({ path, status: answer.status, headers, body: body.toString('base64') });
    }
    for (const side of SIDES) if (side !== 'project') peers[side] = await startPeer(side, log, answers);
    for (const side of SIDES) {
      for (const [i, { target }] of paths.entries()) {
        const { answer, body } = await fetchBytes(peers[side]!.port, target, host);
        sameAnswer(side, answers[i]!, answer, body);
      }
    }
    const results: PathFigures[] = [];
    for (const [i, { name, target, shown }] of paths.entries()) {
      const at = (side: Side): Target => ({ url: `http://127.0.0.1:${peers[side]!.port}${target}`, headers: { host } });
      for (const side of SIDES) await tool.run(at(side), CONNECTIONS, 1);
      const rates = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>;
      const cpu = Object.fromEntries(SIDES.map((side) => [side, [] as number[]])) as Record<Side, number[]>;
      for (let round = 0; round < ROUNDS; round++) {
        for (const side of SIDES) {
          const before = peers[side]!.cpu();
          const rate = await tool.run(at(side), CONNECTIONS, SECONDS);
          rates[side].push(rate);
          // Requests answered: the rate over the run's length (the tool's own count, divided by its own clock).
          cpu[side].push((peers[side]!.cpu() - before) / (rate * SECONDS));
        }
      }
      const request = `GET ${shown} (Host: sandbox.localhost), ${Buffer.from(answers[i]!.body, 'base64').length} bytes`;
      results.push({ name, request, rates, cpu });
      const r = (side: Side) => Math.round(mean(rates[side])).toLocaleString('en');
      const c = (side: Side) => fixed(mean(cpu[side]), 1);
      console.log(`${name} at ${log}: project ${r('project')}, Fastify ${r('fastify')}, Hono ${r('hono')}, bare ${r('bare')} req/s; ×Fastify ${fixed(mean(rates.project) / mean(rates.fastify), 2)}, ×Hono ${fixed(mean(rates.project) / mean(rates.hono), 2)}, ×bare ${fixed(mean(rates.project) / mean(rates.bare), 2)}; CPU µs/request: project ${c('project')}, Fastify ${c('fastify')}, Hono ${c('hono')}, bare ${c('bare')}`);
    }
    return results;
  } finally {
    for (const peer of Object.values(peers)) await peer?.close();
  }
}

const rate = (value: number): string => Math.round(value).toLocaleString('en');

/**
 * Issue 28: the sandbox page and script on the project's edge beside Fastify 5 and Hono 4 answering
 * the same bytes (and a bare `node:http` server), each in a process of its own, at `warn` and at each
 * side's default logging; writes the `edge-peers` section of docs/benchmarks.md.
 */
export async function edgePeersBench(): Promise<void> {
  const tool = await loadTool();
  const load = loadavg();
  const figures = [];
  for (const level of LEVELS) figures.push({ level, paths: await atLevel(tool, level) });
  const missed: string[] = [];
  const ratio = (figure: PathFigures, side: Side, goal: number, where: string): string => {
    const value = mean(figure.rates.project) / mean(figure.rates[side]);
    const met = value >= goal;
    if (!met) missed.push(`${figure.name} beside ${SHOWN[side]} at ${where}`);
    return `**${fixed(value, 2)}×**${met ? '' : ' (missed)'}`;
  };
  const rows = figures.flatMap(({ level, paths }) =>
    paths.map((figure) => {
      const where = level === 'warn' ? '`warn`' : 'default';
      const cells = SIDES.map((side) => `${rate(mean(figure.rates[side]))} (${figure.rates[side].map(rate).join(', ')})`);
      return `| ${figure.name} | ${where} | ${cells.join(' | ')} | ${ratio(figure, 'fastify', PEER_GOAL, where)} | ${ratio(figure, 'hono', PEER_GOAL, where)} | ${ratio(figure, 'bare', BARE_GOAL, where)} |`;
    }),
  );
  const micro = (values: readonly number[]): string => (values.some(Number.isNaN) ? 'n/a' : fixed(mean(values), 1));
  const cpuRows = figures.flatMap(({ level, paths }) =>
    paths.map((figure) => `| ${figure.name} | ${level === 'warn' ? '`warn`' : 'default'} | ${SIDES.map((side) => micro(figure.cpu[side])).join(' | ')} |`),
  );
  const request = figures[0]!.paths.map((p) => `${p.name}: \`${p.request}\``).join('; ');
  const cpu = cpus();
  writeSection('edge-peers', `
## The edge beside Fastify and Hono (issue 28)

One run on ${hostname()} (${cpu.length} × ${cpu[0]?.model ?? 'cpu'}, ${fixed(totalmem() / 2 ** 30, 1)} GiB, Node ${process.version}),
load average ${loadavg().map((l) => fixed(l, 2)).join(', ')} at the end (${load.map((l) => fixed(l, 2)).join(', ')} at the start), everything on loopback.
Load from ${tool.name}: \`${tool.describe(CONNECTIONS, SECONDS)}\`, ${ROUNDS} round${ROUNDS === 1 ? '' : 's'} of ${SECONDS} s per side, the
sides taken in turn (project, Fastify, Hono, bare, project, …) after a 1 s untimed warm-up of each. Requests: ${request}.

Every side runs in a process of its own (bench/peers/), forked from the bench with its stdout on
\`/dev/null\`, and answers the status, headers and body bytes the project answered (checked on every side
before the load, so a side that drifts fails the bench), with a request id in \`X-Request-Id\`:

- **project**: the real composition root (\`createApp\` on \`node:http\`, memory storage), its log through
  the bounded stdout stream \`npm start\` uses; \`LOG_LEVEL=warn\`, or its default \`info\` (one access line
  per request). It computes the page from the \`policy\` query (cached per policy text).
- **Fastify 5**: a route per path answering the recorded bytes; \`logger: { level: 'warn' }\`, or its
  default \`logger: true\` (pino, a line as each request comes in and one as it completes); its request id.
- **Hono 4** on \`@hono/node-server\`: a route per path answering the recorded bytes; \`requestId()\`
  middleware; at the default its \`logger()\` middleware (a line in, a line out), none at \`warn\`.
- **bare**: \`node:http\` answering the recorded bytes by path; no id, no log: the machine's floor.

Requests per second, mean of the rounds (each round in brackets); ratios are the project's rate over the
other side's (goal: ≥ ${PEER_GOAL}× of Fastify and of Hono, ≥ ${BARE_GOAL}× of bare):

| path | logging | project | Fastify 5 | Hono 4 | bare | ÷ Fastify | ÷ Hono | ÷ bare |
|---|---|---|---|---|---|---|---|---|
${rows.join('\n')}

${missed.length === 0 ? 'Every goal is met in this run.' : `Missed in this run: ${missed.join('; ')}.`}

CPU time of each side's process per request answered, microseconds (the process's user and system time
over a round, from \`/proc\`, over the requests the load tool counted; mean of the rounds). On a shared
machine this moves less than a rate does, as it leaves out the time a side waited for a core:

| path | logging | project | Fastify 5 | Hono 4 | bare |
|---|---|---|---|---|---|
${cpuRows.join('\n')}

This run: \`${['BENCH_ONLY', 'BENCH_ROUNDS', 'BENCH_SECONDS', 'BENCH_CONNECTIONS'].flatMap((name) => (process.env[name] ? [`${name}=${process.env[name]}`] : [])).concat('npm run bench').join(' ')}\`.
Reproduce with \`npm run bench\`, or this section alone with \`BENCH_ONLY=edge npm run bench\`
(\`BENCH_ROUNDS\`, \`BENCH_SECONDS\`, \`BENCH_CONNECTIONS\` change the load; \`BENCH_EDGE_PROFILE=<dir>\`
writes a \`--cpu-prof\` profile of the project's process there).
`);
}
