import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import { F, fixtureWorld } from '../support/fixture-world.ts';
import { sha256, testId } from '../support/ids.ts';

/** The time credentials are checked at: any, the fixture's world tokens do not expire. */
const NOW = '2026-03-01T12:00:00.000Z';

describe('mikro-orm storage on embedded PGlite: statements per read', () => {
  let server: EmbeddedPostgres;
  let storage: MikroOrmStorage;
  const sent: string[] = [];
  /** The statements one call sends. */
  const statementsOf = async (read: () => Promise<unknown>): Promise<string[]> => {
    sent.length = 0;
    await read();
    return [...sent];
  };
  const page = { limit: 2, before: null };

  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE, onQuery: (sql) => sent.push(sql) });
    await storage.importWorld(fixtureWorld());
    for (let i = 0; i < 5; i++) await storage.events.append(F.root, 'message', { i });
  });
  after(async () => {
    await storage.close();
    await server.close();
  });

  it('a thread read (row and fork chain) is one statement', async () => {
    assert.equal((await statementsOf(() => storage.threads.findAccessible('alice', F.forkOfFork))).length, 1);
    assert.equal((await statementsOf(() => storage.threads.findAccessible('bob', F.root))).length, 1, 'refused: still one');
  });

  it('a ledger page is one statement, however long the fork chain', async () => {
    const found = await storage.threads.findAccessible('alice', F.forkOfFork);
    const segments = ledgerSegments(found!.chain);
    assert.equal(segments.length, 3);
    assert.equal((await statementsOf(() => storage.ledger.page(segments, page))).length, 1);
    assert.equal((await statementsOf(() => storage.ledger.page(segments, { limit: 2, before: F.forkMsgs[0] }))).length, 1);
  });

  it('each other read is one statement', async () => {
    const reads: Record<string, () => Promise<unknown>> = {
      'userByCredential (a world token)': () => storage.accounts.userByCredential(sha256('token-alice'), NOW),
      'userByCredential (none)': () => storage.accounts.userByCredential(sha256('token-nobody'), NOW),
      account: () => storage.accounts.account('alice'),
      listTokens: () => storage.accounts.listTokens('alice'),
      listAccessible: () => storage.threads.listAccessible('alice', page),
      'listAccessible after a cursor': () => storage.threads.listAccessible('alice', { limit: 2, before: F.shared }),
      'listAccessible searched, archived ones': () => storage.threads.listAccessible('alice', { limit: 2, before: F.shared }, { archived: true, words: ['fix', 'root'] }),
      listByThread: () => storage.conversations.listByThread(F.root),
      runsPage: () => storage.conversations.runsPage(F.root, F.conv, page),
      'runsPage of a conversation without runs': () => storage.conversations.runsPage(F.root, F.conv2, page),
      'runsPage of another thread conversation': () => storage.conversations.runsPage(F.root, F.bobConv, page),
      modelMessagesPage: () => storage.conversations.modelMessagesPage(F.root, F.runs[0], page),
      'modelMessagesPage of another thread run': () => storage.conversations.modelMessagesPage(F.fork, F.runs[0], page),
      pendingByThread: () => storage.conversations.pendingByThread(F.root),
      findOwned: () => storage.artifacts.findOwned('alice', F.artifact),
      findReference: async () => storage.artifacts.findReference([{ thread_id: F.fork, upTo: null }, { thread_id: F.root, upTo: F.rootMsgs[2] }], F.rootMsgs[1]),
      agents: () => storage.catalog.agents(),
      channels: () => storage.catalog.channels(),
      projects: () => storage.catalog.projects(),
      project: () => storage.catalog.project('acme-web'),
      ready: () => storage.ready(),
      'events since': () => storage.events.since(F.root, 2, 2),
      findByKey: () => storage.writer.findByKey('bob', testId(5_500)),
      sessionOf: () => storage.writer.sessionOf(F.conv),
      findRow: () => storage.threads.findRow('alice', F.forkOfFork),
      findRowWithLatest: () => storage.threads.findRowWithLatest('alice', F.root),
      latestByThread: () => storage.conversations.latestByThread(F.root),
    };
    for (const [name, read] of Object.entries(reads)) assert.equal((await statementsOf(read)).length, 1, name);
  });

  it('an id that is not a UUID names nothing and sends nothing', async () => {
    assert.deepEqual(await statementsOf(async () => assert.equal(await storage.threads.findAccessible('alice', 'not-a-uuid'), null)), []);
    assert.deepEqual(await statementsOf(async () => assert.equal(await storage.conversations.runsPage(F.root, 'x', page), null)), []);
  });

  it('imports a world in one transaction', async () => {
    const statements = await statementsOf(() => storage.importWorld(fixtureWorld()));
    assert.match(statements[0]!, /^begin/i);
    assert.match(statements.at(-1)!, /^commit/i);
  });

  it('every read is index lookups and range scans: no sequential or whole-index scan', async () => {
    const found = await storage.threads.findAccessible('alice', F.forkOfFork);
    const reads = [
      () => storage.threads.findAccessible('alice', F.forkOfFork),
      () => storage.threads.listAccessible('alice', { limit: 2, before: F.shared }),
      () => storage.ledger.page(ledgerSegments(found!.chain), { limit: 2, before: F.forkMsgs[1] }),
      () => storage.conversations.listByThread(F.root),
      () => storage.conversations.runsPage(F.root, F.conv, { limit: 2, before: F.runs[2] }),
      () => storage.conversations.modelMessagesPage(F.root, F.runs[0], { limit: 2, before: F.modelMsgs[3] }),
      () => storage.conversations.pendingByThread(F.root),
      () => storage.accounts.userByCredential(sha256('token-alice'), NOW),
      () => storage.accounts.userByCredential(sha256('token-nobody'), NOW),
      () => storage.accounts.listTokens('alice'),
      () => storage.artifacts.findOwned('alice', F.artifact),
      () => storage.artifacts.findReference(ledgerSegments(found!.chain), F.rootMsgs[1]),
      () => storage.events.since(F.root, 2, 2),
      () => storage.writer.findByKey('bob', testId(5_500)),
      () => storage.writer.sessionOf(F.conv),
      () => storage.threads.findRow('alice', F.shared),
      () => storage.conversations.latestByThread(F.root),
      () => storage.catalog.project('acme-web'),
      // A write, explained only: the next seq is one probe of the (thread_id, seq) key.
      () => storage.events.append(F.root, 'message', {}),
    ];
    for (const read of reads) {
      const [sql] = await statementsOf(read);
      // With sequential scans priced out, a plan keeps one only where no index can serve the read.
      const plan = await storage.orm.em.fork().transactional(async (em) => {
        const connection = em.getConnection();
        await connection.execute('set local enable_seqscan = off', [], 'run', em.getTransactionContext());
        return connection.execute<{ 'QUERY PLAN': unknown }[]>(`explain (format json) ${sql}`, [], 'all', em.getTransactionContext());
      });
      const scans = planNodes(plan[0]!['QUERY PLAN']).filter((node) => /Scan/.test(String(node['Node Type'])));
      for (const scan of scans) {
        assert.notEqual(scan['Node Type'], 'Seq Scan', `${sql}\n(a sequential scan of ${String(scan['Relation Name'])})`);
        if (/Index/.test(String(scan['Node Type']))) assert.ok('Index Cond' in scan, `whole-index scan in\n${sql}`);
      }
      assert.ok(scans.length > 0, sql);
    }
  });

  it('each write is one statement, or one transaction; an uncontended append is one statement', async () => {
    // Owned by a user of no other test here, so the thread lists the other tests check stay as they are.
    const newThread = (key: string) => storage.writer.createConsoleThread({
      owner: 'carol', key, project: null, title: 't', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
    });
    const created = await newThread('queries-test');
    const question = await storage.writer.addPending({ kind: 'question', conversation_id: created.conversation.id, run_id: null, title: 'q', options: [], tool_call: null });
    const write = { thread_id: created.thread.id, conversation_id: created.conversation.id, message_id: 'm1', author: 'alice', text: 'x', directory: null, permission_mode: null, lease: { holder: 'queries', ms: 60_000 } };
    let runId = '';
    const transactions: Record<string, () => Promise<unknown>> = {
      createConsoleThread: () => newThread('queries-test-2'),
      'createConsoleThread of an existing key': () => newThread('queries-test'),
      answerPending: () => storage.writer.answerPending(created.thread.id, [{ id: question.id, answer: 'main' }]),
    };
    for (const [name, run] of Object.entries(transactions)) {
      const statements = await statementsOf(run);
      assert.match(statements[0]!, /^begin/i, name);
      assert.match(statements.at(-1)!, /^commit/i, name);
    }
    // A directive that starts a turn on an idle thread is one statement (migration 0027's function); on a busy
    // thread that statement writes nothing, and the transaction decides (here: refused, rolled back).
    const directive = await statementsOf(async () => {
      const outcome = await storage.writer.writeDirective(write);
      if (outcome.kind !== 'started') return;
      runId = outcome.run.id;
      // As a replayed event reads (EVENT_COLUMNS), so a live frame and a replayed one are the same bytes.
      for (const event of [outcome.event, outcome.runStarted]) assert.deepEqual(Object.keys(event), ['seq', 'type', 'thread_id', 'at', 'data']);
    });
    assert.equal(directive.length, 1, directive.join('\n'));
    assert.ok(runId !== '');
    const busy = await statementsOf(() => storage.writer.writeDirective({ ...write, message_id: 'm2' }));
    assert.match(busy[0]!, /^select console_start_turn/i);
    assert.match(busy[1]!, /^begin/i);
    assert.match(busy.at(-1)!, /^rollback/i);
    const single: Record<string, () => Promise<unknown>> = {
      'writeDirective repeated': () => storage.writer.writeDirective(write),
      append: () => storage.events.append(created.thread.id, 'message', {}),
      finishRun: () => storage.writer.finishRun(runId, 'succeeded', null),
      releaseTurn: () => storage.writer.releaseTurn(runId),
      renewTurns: () => storage.writer.renewTurns('queries', [runId], 60_000),
      runningTurn: () => storage.writer.runningTurn(created.thread.id),
      pendingAnswers: () => storage.writer.pendingAnswers([question.id]),
      setPermissionMode: () => storage.writer.setPermissionMode(created.conversation.id, 'plan'),
      setSession: () => storage.writer.setSession(created.conversation.id, 's'),
      appendMessage: () => storage.writer.appendMessage(created.thread.id, { role: 'assistant', text: 'y', artifact_id: null }),
      addPending: () => storage.writer.addPending({ kind: 'question', conversation_id: created.conversation.id, run_id: null, title: 'q', options: [], tool_call: null }),
    };
    for (const [name, run] of Object.entries(single)) assert.equal((await statementsOf(run)).length, 1, name);
  });

  it('the mapping and the migration describe the same schema', async () => {
    assert.equal((await storage.orm.schema.getUpdateSchemaSQL({ wrap: false })).trim(), '');
  });

  it('concurrent reads on the shared PGlite session answer what sequential reads do', async () => {
    const reads = () => [
      storage.threads.findAccessible('alice', F.forkOfFork),
      storage.threads.listAccessible('alice', page),
      storage.conversations.runsPage(F.root, F.conv, page),
      storage.conversations.modelMessagesPage(F.root, F.runs[0], page),
      storage.conversations.pendingByThread(F.root),
      storage.catalog.channels(),
      storage.accounts.userByCredential(sha256('token-bob'), NOW),
    ];
    const sequential: unknown[] = [];
    for (const read of reads()) sequential.push(await read);
    const rounds = await Promise.all(Array.from({ length: 20 }, () => Promise.all(reads())));
    for (const round of rounds) assert.deepEqual(round, sequential);
  });

  // Issue 28: a pool acquire (tarn) cost a statement some twenty promises and a timer; under load a
  // connection now goes from one statement straight to the next one waiting (adapters/mikro-orm/sql.ts).
  it('under load a connection goes from one statement to the next waiting one without the pool', async () => {
    const client = storage.orm.em.getConnection().getKnex().client as { acquireConnection: () => Promise<unknown> };
    const acquire = client.acquireConnection;
    let acquired = 0;
    client.acquireConnection = function (this: unknown) {
      acquired += 1;
      return acquire.call(this);
    };
    try {
      const found = await Promise.all(Array.from({ length: 60 }, () => storage.accounts.userByCredential(sha256('token-alice'), NOW)));
      assert.deepEqual(new Set(found.map((user) => user?.id)), new Set(['alice']));
      assert.ok(acquired <= 2 * EMBEDDED_POOL_SIZE, `${acquired} acquires from the pool for 60 statements on ${EMBEDDED_POOL_SIZE} connections`);
    } finally {
      client.acquireConnection = acquire;
    }
  });

  it('a transaction waiting for the pool is not passed over by statements handing connections on', async () => {
    let stop = false;
    let reads = 0;
    const reader = async () => {
      // Bounded: a transaction passed over forever would let this run out, and the assertion below fail.
      while (!stop && reads < 3000) {
        await storage.threads.findRow('alice', F.root);
        reads += 1;
      }
    };
    const readers = Array.from({ length: 4 * EMBEDDED_POOL_SIZE }, reader);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const before = reads;
    try {
      await storage.orm.em.fork().transactional(async (em) => em.execute('select 1'));
    } finally {
      stop = true;
      await Promise.allSettled(readers);
    }
    const during = reads - before;
    assert.ok(reads < 3000, `the transaction waited for ${during} reads, until the readers ran out`);
  });

  it('reads during an import wait for it instead of deadlocking', async () => {
    const world = fixtureWorld();
    const [, threads, , pending] = await Promise.all([
      storage.importWorld(world),
      storage.threads.listAccessible('alice', { limit: 50, before: null }),
      storage.importWorld(world),
      storage.conversations.pendingByThread(F.root),
    ]);
    assert.equal(threads.items.length, 4);
    assert.equal(pending.length, 2);
  });

  it('answers an unknown thread like an inaccessible one', async () => {
    assert.equal(await storage.threads.findAccessible('alice', testId(99_999)), null);
  });

  // Last: it stops the database under the storage.
  it('is not ready, without throwing, once the database is gone', async () => {
    assert.equal(await storage.ready(), true);
    await server.close();
    assert.equal(await storage.ready(), false);
  });
});

/** Every node of an EXPLAIN (FORMAT JSON) plan. */
function planNodes(value: unknown): Record<string, unknown>[] {
  if (Array.isArray(value)) return value.flatMap(planNodes);
  if (typeof value !== 'object' || value === null) return [];
  const node = value as Record<string, unknown>;
  const children = [node['Plan'], node['Plans']].flatMap(planNodes);
  return 'Node Type' in node ? [node, ...children] : children;
}
