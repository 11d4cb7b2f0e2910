import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { cpus, hostname, loadavg } from 'node:os';
import pino from 'pino';
import { uuidv7 } from 'uuidv7';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { runStatement } from '../adapters/mikro-orm/sql.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { nodeWebhookPost } from '../adapters/node-http/webhook-post.ts';
import { WEBHOOK_BATCH, WEBHOOK_CONCURRENCY, webhookSender } from '../core/automation/webhook-sender.ts';
import { systemClock } from '../core/clock.ts';
import { signWebhook } from '../core/automation/webhook-signature.ts';
import { createScratchDatabase } from '../test/support/scratch-database.ts';
import { F, fixtureWorld } from '../test/support/fixture-world.ts';
import { writeSection } from './report.ts';
import { fixed } from './stats.ts';

// Webhooks out at volume (issue 42): EVENTS stored events of one thread, each fanned out by the outbox trigger to
// WEBHOOKS webhooks of a local receiver (EVENTS × WEBHOOKS deliveries), sent by the service's own sender (claims
// under a lease, the access check at send time, Standard Webhooks signing, node:http with the SSRF-checked
// lookup, a settle per try), beside a bare loop of `fetch` calls doing the same POSTs with the same signing, as
// many at once as the sender sends. Goal: the sender at least 0.7× the bare loop's deliveries per second.

const WEBHOOKS = Number(process.env.BENCH_WEBHOOKS ?? 100);
const EVENTS = Number(process.env.BENCH_WEBHOOK_EVENTS ?? 100);
const GOAL = 0.7;

/** A receiver on 127.0.0.1 that answers 200 to every POST, read to its end, and counts them. */
async function receiver(): Promise<{ server: Server; url: string; received: () => number; reached: (n: number) => Promise<void> }> {
  let count = 0;
  let waiting: { n: number; resolve: () => void } | null = null;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      count += 1;
      res.writeHead(200, { 'content-length': '0' }).end();
      if (waiting !== null && count >= waiting.n) waiting.resolve();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    server, url: `http://127.0.0.1:${port}/in`, received: () => count,
    reached: (n) => (count >= n ? Promise.resolve() : new Promise((resolve) => (waiting = { n, resolve }))),
  };
}

/** The same POSTs, signed the same way, from a bare loop of `fetch` calls, as many at once as the sender makes. */
async function bareLoop(url: string, secrets: readonly string[], bodies: readonly string[]): Promise<number> {
  const jobs: { secret: string; body: string }[] = [];
  for (const body of bodies) for (const secret of secrets) jobs.push({ secret, body });
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: WEBHOOK_CONCURRENCY }, async () => {
    for (let job = jobs[next++]; job !== undefined; job = jobs[next++]) {
      const signed = await signWebhook(job.secret, uuidv7(), Date.now() / 1000, job.body);
      const res = await fetch(url, { method: 'POST', body: job.body, redirect: 'manual', headers: { 'content-type': 'application/json', 'user-agent': 'agent-console-webhooks', ...signed } });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`the receiver answered ${res.status}`);
    }
  }));
  return performance.now() - started;
}

export async function webhookFanoutBench(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const scratch = url ? await createScratchDatabase(url, 'console_bench_webhooks') : null;
  const embedded = scratch === null ? await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR }) : null;
  const storage = await createMikroOrmStorage(scratch !== null ? { clientUrl: scratch.url, pool: 4 } : { clientUrl: embedded!.url, pool: EMBEDDED_POOL_SIZE });
  const target = await receiver();
  const load = loadavg()[0]!;
  try {
    await storage.importWorld(fixtureWorld());
    const secrets: string[] = [];
    for (let i = 0; i < WEBHOOKS; i++) {
      const secret = `whsec_${randomBytes(32).toString('base64')}`;
      secrets.push(secret);
      const stored = await storage.webhooks.create({
        id: uuidv7(), owner: 'alice', url: target.url, events: ['run_finished'], thread_ids: null, secret, enabled: true, created_at: new Date().toISOString(),
      }, WEBHOOKS);
      if (!stored) throw new Error('a webhook was not stored');
    }
    // The events, stored as a turn's end stores them: the trigger fills the outbox in the same statements.
    const bodies: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const runId = uuidv7();
      const event = await storage.events.append(F.root, 'run_finished', { run_id: runId, stop_reason: 'end_turn' });
      bodies.push(JSON.stringify({ type: 'run_finished', thread_id: F.root, run_id: runId, data: { run_id: runId, stop_reason: 'end_turn' }, created_at: event.at }));
    }
    const total = EVENTS * WEBHOOKS;
    const [counted] = await runStatement<{ pending: number }>(storage.orm, "select count(*)::int as pending from webhook_deliveries where status = 'pending'", []);
    const pending = counted?.pending ?? 0;
    if (pending !== total) throw new Error(`the outbox holds ${pending} deliveries, not ${total}`);

    const bare = await bareLoop(target.url, secrets, bodies);
    const before = target.received();
    const sender = webhookSender({
      store: storage.webhooks, post: nodeWebhookPost({ allowedHosts: ['127.0.0.1'] }), clock: systemClock,
      log: pino({ level: 'silent' }), holder: 'bench',
      canRead: async (userId, threadId) => (await storage.accounts.account(userId))?.active === true && (await storage.threads.findRow(userId, threadId)) !== null,
    });
    const started = performance.now();
    sender.start();
    await target.reached(before + total);
    const sent = performance.now() - started;
    await sender.stop();

    const rate = (ms: number) => total / (ms / 1000);
    const ratio = rate(sent) / rate(bare);
    const server = (await runStatement<{ server_version: string }>(storage.orm, 'show server_version', []))[0]!;
    writeSection('webhook-fanout', `
## Webhooks out: ${total.toLocaleString('en')} deliveries

${EVENTS} \`run_finished\` events of one thread, each fanned out to ${WEBHOOKS} webhooks of one local receiver
(127.0.0.1, answering 200), ${total.toLocaleString('en')} deliveries in the outbox (written by the trigger on
\`events\`), on ${scratch !== null ? `PostgreSQL ${server.server_version}` : `embedded PGlite (PostgreSQL ${server.server_version}); no server was configured`}.
The service's sender (\`core/automation/webhook-sender.ts\`: a claim of ${WEBHOOK_BATCH} under a lease, ${WEBHOOK_CONCURRENCY} tries at a time, the owner's
access checked at send time, Standard Webhooks signing, \`node:http\` with the checked lookup, a settle per try)
beside a bare loop of \`fetch\` calls making the same POSTs with the same signing, ${WEBHOOK_CONCURRENCY} at a time. One
run each, on ${hostname()} (${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, load ${fixed(load, 2)} at the start).

| | time | deliveries per second |
|---|---|---|
| bare \`fetch\` loop | ${fixed(bare / 1000, 2)} s | ${fixed(rate(bare), 0)} |
| the service's sender | ${fixed(sent / 1000, 2)} s | ${fixed(rate(sent), 0)} |

The sender at **${fixed(ratio, 2)}×** the bare loop: goal at least ${GOAL}×, **${ratio >= GOAL ? 'met' : 'missed'}** in this run.

Reproduce with \`BENCH_ONLY=webhooks npm run bench\` (\`BENCH_WEBHOOKS\`, \`BENCH_WEBHOOK_EVENTS\`; \`TEST_DATABASE_URL\` or
\`BENCH_DATABASE_URL\` for PostgreSQL).
`);
    console.log(`webhooks: ${total} deliveries, bare ${fixed(bare / 1000, 2)} s, sender ${fixed(sent / 1000, 2)} s, ${fixed(ratio, 2)}x`);
  } finally {
    target.server.closeAllConnections();
    target.server.close();
    await storage.close();
    await embedded?.close();
    await scratch?.drop();
  }
}
