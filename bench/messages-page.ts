import { hostname, cpus } from 'node:os';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { runStatement } from '../adapters/mikro-orm/sql.ts';
import { createMikroOrmStorage } from '../adapters/mikro-orm/storage.ts';
import { ledgerSegments } from '../domain/ledger-visibility.ts';
import { createScratchDatabase } from '../test/support/scratch-database.ts';
import { fixtureWorld } from '../test/support/fixture-world.ts';
import { testId } from '../test/support/ids.ts';
import { writeSection } from './report.ts';
import { fixed, quantile, sample } from './stats.ts';

const MESSAGES = 100_100;
const DEPTH = 100_000;
const LIMIT = 50;
const RUNS = Number(process.env.BENCH_RUNS ?? 500);

/**
 * The messages page at depth 0 and at depth 100,000 of one thread's ledger, on PostgreSQL
 * (`BENCH_DATABASE_URL`, else `TEST_DATABASE_URL`, else embedded PGlite). A keyset page is an
 * index range scan that starts at the cursor, so the deep page should cost what the first does.
 */
export async function messagesPageBench(): Promise<void> {
  const url = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL;
  const scratch = url ? await createScratchDatabase(url, 'console_bench') : null;
  const embedded = scratch === null ? await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR }) : null;
  const storage = await createMikroOrmStorage(
    scratch !== null ? { clientUrl: scratch.url, pool: 4 } : { clientUrl: embedded!.url, pool: EMBEDDED_POOL_SIZE },
  );
  try {
    const world = fixtureWorld();
    const threadId = testId(50_000_000);
    await storage.importWorld({ ...world, threads: [{ ...world.threads[0]!, id: threadId, messages: [], conversations: [] }] });
    // Ids that sort like UUIDv7s, one per millisecond after the thread's own: built in SQL, one statement.
    const base = Date.parse('2026-01-01T00:00:00.000Z') + 60_000_000;
    await runStatement(storage.orm, `
      insert into messages (id, thread_id, role, text, artifact_id, created_at)
      select (substr(h, 1, 8) || '-' || substr(h, 9, 4) || '-7000-8000-' || lpad(to_hex(i), 12, '0'))::uuid,
             ?, 'user', 'message ' || i, null, to_timestamp((? + i) / 1000.0)
      from (select i, lpad(to_hex(? + i), 12, '0') as h from generate_series(1, ?) as i) s`, [threadId, base, base, MESSAGES]);
    await runStatement(storage.orm, 'analyze messages', []);

    const found = await storage.threads.findAccessible('alice', threadId);
    const segments = ledgerSegments(found!.chain);
    const [deep] = await runStatement<{ id: string }>(storage.orm,
      'select id from messages where thread_id = ? order by id desc offset ? limit 1', [threadId, DEPTH]);
    const shallowPage = () => storage.ledger.page(segments, { limit: LIMIT, before: null });
    const deepPage = () => storage.ledger.page(segments, { limit: LIMIT, before: deep!.id });
    const check = await deepPage();
    if (check.items.length !== LIMIT) throw new Error(`the deep page has ${check.items.length} items`);

    const shallow = await sample(shallowPage, RUNS);
    const deepTimes = await sample(deepPage, RUNS);
    const ratio = quantile(deepTimes, 0.5) / quantile(shallow, 0.5);
    const server = (await runStatement<{ server_version: string }>(storage.orm, 'show server_version', []))[0]!;
    const row = (name: string, t: number[]) =>
      `| ${name} | ${fixed(quantile(t, 0.5))} | ${fixed(quantile(t, 0.95))} | ${fixed(quantile(t, 0.99))} |`;
    const verdict = ratio <= 1.5 ? 'within' : 'NOT within';
    writeSection('messages-page', `
## Messages page: depth 0 and depth 100,000

The ledger read of one thread holding ${MESSAGES.toLocaleString('en')} messages, ${LIMIT} per page, newest first
(\`LedgerStore.page\`, the query behind \`GET /api/console/threads/{id}/messages\`), on
${scratch !== null ? `PostgreSQL ${server.server_version}` : `embedded PGlite (PostgreSQL ${server.server_version}); no server was configured`}.
Depth 100,000 is \`?before=\` the id of the 100,001st newest message. ${RUNS} timed runs each after a warm-up,
one client, on ${hostname()} (${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}). Milliseconds per read:

| page | p50 | p95 | p99 |
|---|---|---|---|
${row('depth 0', shallow)}
${row('depth 100,000', deepTimes)}

Deep / shallow (p50): **${fixed(ratio, 2)}**, ${verdict} the 1.5x goal. Reproduce with
\`TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench\`.
`);
    console.log(`messages page: depth 0 p50 ${fixed(quantile(shallow, 0.5))} ms, depth ${DEPTH} p50 ${fixed(quantile(deepTimes, 0.5))} ms, ratio ${fixed(ratio, 2)}`);
    if (ratio > 1.5) process.exitCode = 1;
  } finally {
    await storage.close();
    await embedded?.close();
    await scratch?.drop();
  }
}
