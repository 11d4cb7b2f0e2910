import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WebSocket } from 'ws';
import { demoAgentSession } from './demo-agent-session.ts';
import { writeSection } from './report.ts';
import { fixed, quantile } from './stats.ts';

// A turn's overhead (issue 28): from the POST of a directive to the agent's first text on the live
// socket, beside a bare ACP client prompting the same demo agent over stdio. Both sides keep one warm
// agent process and one warm session (the service's runner does: one process per agent, the
// conversation's session reused), so the window holds what each side does per turn, not a start.

const TURNS = Number(process.env.BENCH_TURNS ?? 50);
const ROUNDS = Number(process.env.BENCH_TURN_ROUNDS ?? 3);
const WARMUP = Number(process.env.BENCH_TURN_WARMUP ?? 10);
/**
 * A pause after each turn: a service still finishing the turn before (its hand-over, its last writes, on
 * PGlite tens of statements) would otherwise run beside the next side's timed window and be counted there.
 */
const GAP_MS = Number(process.env.BENCH_TURN_GAP_MS ?? 25);
/** Issue 28's goal: the service's p50 within 1.2× of the bare client's. */
const GOAL = 1.2;
/** Issue 41's goal for a turn on embedded PGlite: its p50 at most this many times the relay's (the floor of the interface). */
const RELAY_GOAL = 2.5;
const TOKEN = 'dev-alice';
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const TEXT = 'Say hello';

type Storage = 'memory' | 'embedded';
const SHOWN: Record<Storage, string> = { memory: 'memory', embedded: 'embedded PGlite' };

/** One side: runs one turn and answers milliseconds from the prompt's send to its first text. */
interface Side {
  readonly turn: () => Promise<number>;
  readonly close: () => Promise<void>;
  /** Extra figures of a turn (the service: POST to its 202), by name, in milliseconds. */
  readonly extra?: Map<string, number[]>;
  /** The service process's CPU time so far (user and system, all its threads, PGlite's included), in milliseconds. */
  readonly cpu?: () => number;
}

/** A process's CPU time from /proc (Linux; clock ticks of 10 ms); NaN where there is none. */
function cpuOf(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

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

function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
    child.once('exit', () => {
      clearTimeout(kill);
      done();
    });
    child.kill(signal);
  });
}

interface Posted {
  readonly status: number;
  readonly body: string;
}

/** A POST of `body` as JSON on a kept-alive connection of `agent`, answered with its status and body. */
function postJson(agent: HttpAgent, port: number, path: string, headers: Record<string, string>, body: unknown): Promise<Posted> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path, agent, headers: { ...headers, 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/**
 * What a turn waits for on a live socket: `text` once the first `message` event with a `delta` arrives,
 * `asleep` once the turn's `reflex_asleep` does. `next` is called before the turn's request is sent.
 */
function liveWaits(ws: WebSocket): { next: () => { text: Promise<void>; asleep: Promise<void> }; reset: () => void } {
  let onText: (() => void) | null = null;
  let onAsleep: (() => void) | null = null;
  ws.on('message', (data) => {
    const event = JSON.parse(String(data)) as { type: string; data: { delta?: unknown } };
    if (event.type === 'message' && typeof event.data.delta === 'string' && onText !== null) {
      const done = onText;
      onText = null;
      done();
    } else if (event.type === 'reflex_asleep' && onAsleep !== null) {
      const done = onAsleep;
      onAsleep = null;
      done();
    }
  });
  return {
    next: () => ({ text: new Promise<void>((resolve) => (onText = resolve)), asleep: new Promise<void>((resolve) => (onAsleep = resolve)) }),
    reset: () => {
      onText = onAsleep = null;
    },
  };
}

/**
 * The service as `npm start` runs it (compiled `dist/src/main.js`, its default log level, its log to
 * /dev/null), on `storage`, in a process of its own; its agent is the demo agent it spawns itself.
 * The directive limit is lifted (the bench sends hundreds a minute); nothing else is changed.
 */
async function serviceSide(storage: Storage, root = ROOT): Promise<Side> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'console-bench-turn-'));
  const profile = process.env.BENCH_TURN_PROFILE;
  const child = spawn(process.execPath, [...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : []), join(root, 'dist', 'src', 'main.js')], {
    cwd: root,
    env: { ...process.env, CONSOLE_STORAGE: storage, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: join(dataDir, 'data'), DIRECTIVES_PER_MINUTE: '100000' },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-2000)));
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const post = (path: string, body: unknown): Promise<Posted> => postJson(agent, port, path, { authorization: `Bearer ${TOKEN}` }, body);
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the service exited with ${child.exitCode}: ${stderr}`);
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((res) => res.status === 200, () => false);
    if (ready) break;
    if (Date.now() > deadline) {
      await stop(child);
      throw new Error(`the service did not get ready in 60 s: ${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  // The live socket on a new thread key, subscribed before the first directive, as the console page does.
  const key = crypto.randomUUID();
  const ws = new WebSocket(`ws://127.0.0.1:${port}/api/console/live?thread=${key}&after=0`, { headers: { authorization: `Bearer ${TOKEN}` } });
  await once(ws, 'open');
  const waits = liveWaits(ws);
  let path = `/api/console/threads/${key}/directives`;
  let first = true;
  const accepted: number[] = [];

  return {
    extra: new Map([['POST to 202', accepted]]),
    cpu: () => cpuOf(child.pid),
    async turn() {
      for (;;) {
        const { text, asleep } = waits.next();
        const started = performance.now();
        const posted = post(path, first ? { text: TEXT, project: 'acme-web' } : { text: TEXT });
        const answered = posted.then((answer) => (answer.status === 202 ? performance.now() - started : Number.NaN));
        const answer = await posted;
        // The turn before is handed over just after its `reflex_asleep`: a directive a moment early is refused, and sent again.
        if (answer.status === 409 && answer.body.includes('turn_running')) {
          waits.reset();
          await new Promise((resolve) => setTimeout(resolve, 2));
          continue;
        }
        if (answer.status !== 202) throw new Error(`the directive was answered ${answer.status}: ${answer.body}`);
        if (first) {
          path = `/api/console/threads/${(JSON.parse(answer.body) as { thread_id: string }).thread_id}/directives`;
          first = false;
        }
        await text;
        const ms = performance.now() - started;
        accepted.push(await answered);
        await asleep;
        return ms;
      }
    },
    async close() {
      ws.terminate();
      agent.destroy();
      // SIGTERM: the service drains and (embedded) closes PGlite, writing the CPU profile if asked.
      await stop(child);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * The floor of any service that takes a turn by HTTP and answers on a live socket: bench/turn-relay-process.ts,
 * in a process of its own with the same demo agent, relays each prompt and its chunks with nothing else (no
 * storage, no authentication, no checks). Timed as the service is: from the POST to the first delta frame.
 */
async function relaySide(): Promise<Side> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench', 'turn-relay-process.ts'), join(ROOT, 'dist', 'src', 'demo', 'acp-agent.js')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  const { port } = JSON.parse(String(line)) as { port: number };
  const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
  await once(ws, 'open');
  const waits = liveWaits(ws);
  return {
    cpu: () => cpuOf(child.pid),
    async turn() {
      const { text, asleep } = waits.next();
      const started = performance.now();
      const answer = await postJson(agent, port, '/prompt', {}, { text: TEXT });
      if (answer.status !== 202) throw new Error(`the relay answered ${answer.status}`);
      await text;
      const ms = performance.now() - started;
      await asleep;
      return ms;
    },
    async close() {
      ws.terminate();
      agent.destroy();
      await stop(child);
    },
  };
}

/**
 * A bare ACP client over stdio: the demo agent spawned as the service's runner spawns it (the same
 * compiled script, the same allow-listed environment, its own process group), `initialize` and one
 * `session/new` untimed, then per turn `session/prompt` timed to the first `agent_message_chunk`, and
 * the prompt's answer awaited before the next.
 */
async function bareSide(): Promise<Side> {
  let onText: (() => void) | null = null;
  const session = await demoAgentSession(join(ROOT, 'dist', 'src', 'demo', 'acp-agent.js'), () => {
    if (onText === null) return;
    const done = onText;
    onText = null;
    done();
  });
  return {
    async turn() {
      const text = new Promise<void>((resolve) => (onText = resolve));
      const started = performance.now();
      const answered = session.prompt(TEXT);
      await text;
      const ms = performance.now() - started;
      await answered;
      return ms;
    },
    close: session.close,
  };
}

interface Figures {
  readonly p50: number;
  readonly p95: number;
  readonly p99: number;
}
const figures = (samples: readonly number[]): Figures => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: quantile(sorted, 0.5), p95: quantile(sorted, 0.95), p99: quantile(sorted, 0.99) };
};

async function runTurns(side: Side, count: number, into: number[] | null): Promise<void> {
  for (let i = 0; i < count; i++) {
    const ms = await side.turn();
    into?.push(ms);
    await new Promise((resolve) => setTimeout(resolve, GAP_MS));
  }
}

export async function turnOverheadBench(): Promise<void> {
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const storages = (process.env.BENCH_TURN_STORAGE ?? 'memory,embedded').split(',') as Storage[];
  // Another checkout of the project (built with scripts/build.mjs), run beside this one: before and after a change, in one run.
  const before = process.env.BENCH_TURN_BEFORE;
  if (before) execFileSync(process.execPath, [join(before, 'scripts', 'build.mjs')], { stdio: 'inherit' });
  const sides = new Map<string, Side>();
  sides.set('bare', await bareSide());
  sides.set('relay', await relaySide());
  for (const storage of storages) {
    sides.set(storage, await serviceSide(storage));
    if (before) sides.set(`${storage} before`, await serviceSide(storage, before));
  }
  const samples = new Map<string, number[]>([...sides.keys()].map((name) => [name, []]));
  const cpuPerTurn = new Map<string, number>();
  try {
    for (const side of sides.values()) await runTurns(side, WARMUP, null);
    for (const side of sides.values()) side.extra?.forEach((values) => values.splice(0));
    // Alternating: the bare client, then each service, turn after turn, so a load spike on this
    // shared machine falls on every side alike.
    const cpuAtStart = new Map([...sides].map(([name, side]) => [name, side.cpu?.() ?? Number.NaN]));
    // Alternating turn by turn within each round: the load here moves within a second.
    for (let round = 0; round < ROUNDS; round++) {
      for (let i = 0; i < TURNS; i++) for (const [name, side] of sides) await runTurns(side, 1, samples.get(name)!);
      console.log(`turn overhead: round ${round + 1}/${ROUNDS} done`);
    }
    for (const [name, side] of sides) cpuPerTurn.set(name, ((side.cpu?.() ?? Number.NaN) - cpuAtStart.get(name)!) / (ROUNDS * TURNS));
  } finally {
    for (const side of sides.values()) await side.close().catch((error: unknown) => console.error(error));
  }

  const bare = figures(samples.get('bare')!);
  const rows: string[] = [];
  const lines: string[] = [];
  const row = (label: string, f: Figures, ratio: string) => rows.push(`| ${label} | ${fixed(f.p50, 2)} | ${fixed(f.p95, 2)} | ${fixed(f.p99, 2)} | ${ratio} |`);
  row('bare ACP client over stdio', bare, '1.00');
  const relay = figures(samples.get('relay')!);
  const relayRatio = relay.p50 / bare.p50;
  row('bare relay: HTTP in, live socket out, nothing else', relay, `${fixed(relayRatio, 2)} (the floor of this interface)`);
  console.log(`turn overhead relay: p50 ${fixed(relay.p50, 2)} ms vs bare ${fixed(bare.p50, 2)} ms = ${fixed(relayRatio, 2)}x`);
  for (const storage of storages) {
    for (const name of before ? [storage, `${storage} before`] : [storage]) {
      const label = `service, ${SHOWN[storage]}${name === storage ? '' : ` (${process.env.BENCH_TURN_BEFORE_LABEL ?? 'before'})`}`;
      const f = figures(samples.get(name)!);
      const ratio = f.p50 / bare.p50;
      row(label, f, `${fixed(ratio, 2)} ${ratio <= GOAL ? '(goal met)' : `(goal ${GOAL}× missed)`}`);
      const accepted = figures(sides.get(name)!.extra!.get('POST to 202')!);
      // Each round's p50 beside the bare client's of the same round: the load on this machine moves between rounds.
      const rounds = Array.from({ length: ROUNDS }, (_, r) => {
        const of = (side: string) => figures(samples.get(side)!.slice(r * TURNS, (r + 1) * TURNS)).p50;
        return fixed(of(name) / of('bare'), 2);
      });
      lines.push(`- ${label}: p50 ÷ bare round by round ${rounds.join(', ')}; p50 ÷ the relay's ${fixed(f.p50 / relay.p50, 2)}${storage === 'embedded' ? ` (goal at most ${RELAY_GOAL}: ${f.p50 / relay.p50 <= RELAY_GOAL ? 'met' : 'missed'})` : ''}; POST to its 202 answer p50 ${fixed(accepted.p50, 2)} ms, p99 ${fixed(accepted.p99, 2)} ms; p50 minus the bare p50: ${fixed(f.p50 - bare.p50, 2)} ms; the service's CPU per whole turn ${fixed(cpuPerTurn.get(name)!, 2)} ms.`);
      console.log(`turn overhead ${name}: p50 ${fixed(f.p50, 2)} ms vs bare ${fixed(bare.p50, 2)} ms = ${fixed(ratio, 2)}x`);
    }
  }
  const serviceOverRelay = storages.map((storage) => `${fixed(figures(samples.get(storage)!).p50 / relay.p50, 2)}× on ${SHOWN[storage]}`).join(' and ');
  // What embedded PGlite adds over memory, per statement waited for (4 before the prompt, 1 after the agent's text).
  const perStatement = samples.has('memory') && samples.has('embedded')
    ? `, ${fixed((figures(samples.get('embedded')!).p50 - figures(samples.get('memory')!).p50) / 3, 2)} ms each in this run (the embedded p50 minus the memory p50, over 3)`
    : '';
  const command = `BENCH_ONLY=turn${before ? ' BENCH_TURN_BEFORE=<a checkout of the commit before> BENCH_TURN_BEFORE_LABEL=...' : ''} BENCH_TURN_ROUNDS=${ROUNDS} npm run bench`;
  writeSection(
    'turn-overhead',
    `## A turn's overhead beside a bare ACP client

\`${command}\` (bench/turn-overhead.ts; \`BENCH_TURNS\`, \`BENCH_TURN_ROUNDS\`, \`BENCH_TURN_STORAGE\`;
\`BENCH_TURN_PROFILE=<dir>\` writes the service's CPU profile there; \`BENCH_TURN_BEFORE=<dir>\` runs another checkout's
service beside, built there, for a before and after in one run). ${ROUNDS} rounds of ${TURNS} turns per side after
${WARMUP} warm-up turns each, the sides alternating turn by turn, each turn ${GAP_MS} ms after the one before has ended (so
no side's tail, such as a hand-over's writes, runs in the next side's window), on
${cpus().length} cores shared with other work (load ${loadavg()[0]!.toFixed(1)} at the end: the figures move with it,
so only ratios within this run mean anything, and the service's CPU per turn is the steadier before and after).

What is timed, on each side, with the same demo agent (\`dist/src/demo/acp-agent.js\`, \`claude\` profile, spawned
with the allow-listed environment in its own process group) kept warm: one agent process and one session for
the whole run, as the service's runner keeps one process per agent and continues the conversation's session.
- **Service**: \`npm start\`'s compiled service in a process of its own (its default log level, its log to /dev/null,
  \`DIRECTIVES_PER_MINUTE\` lifted), one thread of the demo user's. From writing \`POST /api/console/threads/{id}/directives\`
  (\`{"text": "${TEXT}"}\`, a kept-alive connection) to the first \`message\` event carrying a \`delta\` read from the
  live socket subscribed to the thread. Inside: authentication, the directive's checks and its transaction, the
  \`message\` and \`run_started\` events (stored with the directive, with the prompt's model message) published, the turn started, \`session/prompt\`,
  the agent's first chunk, its \`delta\` event stored then published, the socket frame.
- **Relay** (bench/turn-relay-process.ts): what any service with this interface must do at least, in a process of
  its own with the same agent: \`POST /prompt\` parsed, answered 202, \`session/prompt\` sent; each
  \`agent_message_chunk\` sent as a WebSocket frame. No storage, no authentication, no checks, no event log. Timed
  as the service is, from the POST to the first delta frame.
- **Bare**: a client made with the SDK (\`acp.client(...).connect(ndJsonStream(...))\`, the SDK 2.x successor of
  \`ClientSideConnection\`) after \`initialize\` and \`session/new\`: from sending \`session/prompt\` to the first
  \`agent_message_chunk\` notification.

| side | p50 ms | p95 ms | p99 ms | p50 ÷ bare |
|---|---|---|---|---|
${rows.join('\n')}

${lines.join('\n')}

What the service waits for before the prompt, counted by \`test/http/turn-round-trips.test.ts\` (so no change
undoes it unseen): 4 storage round trips (the token's user; the thread with its latest conversation, one statement,
and the agents, read together; the project; the directive, which also stores \`run_started\` and the prompt's model
message and reads the session's id), 5 SQL statements on PostgreSQL (the directive one of them: on an idle thread, one function of the
database, \`console_start_turn\` of migration 0027, locks the thread's row and then its conversations, checks them and the
queue, and writes the claim, the user's message, the run, the prompt's model message and the \`message\` and
\`run_started\` events; where it finds anything else, busy, queued, moved, it writes nothing and the transaction that
did all this in 5 statements decides), 2 on embedded PGlite as \`npm start\`
opens it, the thread's and the directive: the database being this process's alone (its data dir is locked), its
catalog (agents, projects) is kept in memory until a world is imported, and a credential found (a world token's user,
a session's) for up to 10 s, forgotten at every write of the process that could change it (a session ended, a token
revoked, an account changed, a world imported: adapters/mikro-orm/kept-credentials.ts), so 2 round trips there. Before issue 28's work it was 10 round trips one
after another and 18 statements: the thread, its conversation and the agents each waited for the one before, the
project was read twice, the turn stored \`run_started\`, then the model message, then read the session, and the
transaction sent its claim, message, run and event one by one. The runner also stopped reading the service's whole
environment on every turn to build its redactor (\`agentEnvironment\` was about 1% of the busy service's CPU): it is
made once per agent process. And no promise hook runs any more: the world import at start used MikroORM's
\`em.transactional\`, whose AsyncLocalStorage left Node's promise hook on for the whole process (about 125 ns more on
every await); it is a knex transaction now, and \`test/promise-hooks-off.test.ts\` fails if a hook comes back.
The ordering rules hold: \`run_started\` is stored in the same write as the directive's \`message\` event (the next
seq), published after it and before the turn starts, so before anything the agent does; a queued directive gets neither
until a hand-over starts its turn; a refused or failed write stores neither. The catalog is not kept on PostgreSQL:
another instance's world import would go unseen there without a statement per read (or a listener) to learn of it.

The embedded database's statements (issue 41). A trace of every batch PGlite ran during a turn showed its time in
planning, not in the socket: each statement came as text with its values in it, so PGlite (PostgreSQL in
WebAssembly) parsed and planned it anew each time. The credential lookup took 1.9 ms, the claim 2.1 ms, each event
append 1.0 ms; the same lookup prepared once answers in 0.26 ms. Now the statements of a turn's path (the credential,
the thread and its conversations, the directive's locks and claim, the event appends, the run's records and its
hand-over) are sent with their values apart (\`prepared\` in adapters/mikro-orm/sql.ts), and the embedded socket keeps
one plan per statement text (adapters/embedded/statement-cache.mjs, at most 200, the least used closed). The socket
is ours too (adapters/embedded/pglite-wire.mjs, replacing pglite-socket, which made a database call and a socket
write per protocol message): a statement's messages go to PGlite in one call. Summed over a turn, PGlite's own time
went from 28 ms to 16 ms. Two more cuts, on the service's side of each statement: a transaction's statements are sent
on its leased connection directly, as \`runStatement\` sends one (\`onConnection\` in sql.ts), where each went through
MikroORM's \`execute\` and knex's query builder; and the socket answers a transaction's \`begin\` at once, sending it
to PGlite with the connection's next statement (the session is held for that connection meanwhile). What a turn
waits for before its prompt is now about 6 ms of the database's statements and the gaps between them (a trace of
one turn: the credential, the thread, its conversations, then begin with the thread's lock, the conversations'
lock, the claim and commit), the claim alone 0.8 to 2 ms. Then the directive became one statement (above): in a
trace of both sides of one run (\`WIRE_TRACE\`-style timings of every batch in PGlite's thread, 90 turns each), the
time from the credential's statement to the directive's end went from 4.04 ms to 3.34 ms at the median, PGlite's own
time in those statements from 2.26 ms to 2.09 ms (the function's statements cost what the transaction's did; the
round trips between them are what went). The turn's p50 moved less than the noise of a run (7.25 against 7.42 ms in
one run, 8.54 against 8.42 ms in another): the time from the directive's end to the agent's first delta stored grew
by as much, the client, the agent and PGlite's thread taking the cores in another order. Two statements more went
before the prompt since: the token's lookup (credentials kept, above: it cost 0.56 to 1 ms, the first statement of a
turn waking PGlite's thread) and the latest conversation's read, now part of the thread's (\`findRowWithLatest\`). In
two runs against the commit before them (\`BENCH_TURN_BEFORE\`), embedded p50 7.73 against 8.04 ms (kept credentials
alone), 8.04 against 8.51 ms (both) and, with the machine busier, 9.54 against 9.77 ms (both, the table above):
2.96×, 2.88× and 2.66× the relay floor, where the goal is 2.5×.

What the first delta waited on (issue 41, again). A timeline of one turn (a timestamp at each step in the service and
at each batch in PGlite's thread, 70 turns) showed the first delta's append done in PGlite 0.19 ms after it began,
and its answer taken up by the service 0.3 to 0.6 ms after that: the demo agent sends its whole turn at once (a
dozen updates), and the service was parsing the rest of it (the SDK checks each line with zod) while the first
one's append was in flight, on two cores shared with PGlite's thread, the agent and the client. While an agent
process runs one turn, its output now reaches the SDK a line at a time (adapters/acp/agent-input.ts), and while
that turn's first update is stored and published its next lines are not read at all (\`holdInput\`, at most 100 ms;
agent-turn.ts, turn-route.ts). Beside another turn of the same process nothing is held, and outside a turn the
output goes as it arrives; once it ends, what is left goes at once, so an agent that answers and exits is heard. In
alternating runs against the commit before: embedded p50 4.74 against 5.20 ms (a first cut that held on every
process's output, all the time), 4.90 against 5.12 ms (a cut that went back to whole reads after the first update),
then, as built, 4.72 against 4.95 ms and the table above; memory within the noise.
\`test/adapters/acp-agent-input.test.ts\` fails if the next lines are parsed while the first is delivered (a real
agent process that writes its turn in one write, the SDK between), if an answer written just before an exit is
lost, or if a turn beside another holds. Measured
and dropped on the way, each beside the same commit in one run: handing the lines on one at a time without the
hold (4.60 against 4.62 ms); the thread's read left out altogether, its row answered from memory (4.62 against
4.79 ms: a round trip before the prompt is worth about 0.17 ms here, not the 0.4 ms its trace shows); PGlite
served on the service's own thread instead of its own (4.86 against 4.97 ms); a shorter path from the turn's start
to the prompt for a session the process knows (4.50 against 4.43 ms); V8 tiering PGlite's code up sooner (5.11
against 5.22 ms); PostgreSQL's WAL settings (\`full_page_writes\`, \`wal_level\`) for the directive's function (no
change). Left: the full-text index on the ledger's text (issue 41's search) costs about 0.11 ms of the directive's
function (0.54 ms alone, 0.43 ms without that index), paid at every message stored.

What remains, and why (profiles: \`BENCH_TURN_PROFILE=<dir> BENCH_TURN_STORAGE=memory BENCH_ONLY=turn npm run bench\`):
- The relay row is the floor of this interface: a directive taken by HTTP and its text sent on a live socket,
  with nothing of the service, is ${fixed(relayRatio, 2)}× the bare client in this run. The 1.2× goal lies below what any
  service answering on a socket can do on this machine; against that floor the service is ${serviceOverRelay}.
- The bare window is one stdio round trip to an idle agent process. The service's holds that same round trip
  (session/prompt out, the first \`agent_message_chunk\` in, parsed and checked by the SDK), plus an HTTP request
  (the body parsed, the token hashed and looked up, the directive checked), the storage above, and a WebSocket
  frame; and the first delta is appended to the thread's event log before it is published (contract section 5:
  nothing reaches a socket that a reconnect could not replay), one more round trip after the agent's text. Four
  processes take part in the service's window (client, service, PGlite's thread on embedded, agent) against two in
  the bare one; on a loaded two-core machine each hand-over may wait for a core, which the p95 and p99 show.
- On memory the service's own work is about a millisecond (traced in the service: request to prompt sent 1.0 ms,
  agent chunk to its socket frame 0.2 ms); what the ratio shows beyond that is scheduling, and it moves with the
  load from round to round.
- Where the service's own CPU goes on memory (a CPU profile of 210 turns on a loaded machine, 3.3 s busy): the
  socket's frame writes (\`writev\`, one per event sent) 13%; the ACP SDK checking each \`session/update\` with zod
  (its unions build an issue, message and all, for each branch that fails) 6%, which the bare client pays alike;
  the directive from its transaction to the prompt written 5%; the memory event log's copy of each event 3%. The
  redactor rebuilt every update string by string even for an agent with no secrets (0.8%): such an agent's
  updates are now passed on as mapped (\`test/adapters/acp-turn-route.test.ts\`). No logging shows per turn, and
  no promise hook runs. Cutting \`structuredClone\` in the memory log for a JSON copy was measured at 0.4 µs an
  event: dropped.
- On embedded PGlite every statement is a turn of the database's one session, in its worker thread, over a local
  socket: 2 before the prompt and 1 after the agent's text${perStatement}. Prepared, they cost 0.15 to
  1 ms each (the first after an idle gap, and the directive's function, the most), and the session serves one statement at a time:
  the previous turn's tail and the sweeper's statements queue with them.
`,
  );
}


