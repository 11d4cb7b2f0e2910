import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { startedAtOnce, writeInTransaction } from '../../adapters/mikro-orm/directive-writes.ts';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import type { DirectiveOutcome, DirectiveWrite } from '../../ports/directive-writes.ts';

/**
 * A directive that starts a turn is written by one of two paths: the database's function (`startedAtOnce`, the
 * common case) or the transaction (`writeInTransaction`, which the function leaves every other case to, and which
 * still starts a turn when a race sends it there). Both must write the same rows and answer alike; this runs each on a
 * thread of its own and compares what they left, with ids and times made alike.
 */
describe('mikro-orm directives: the function and the transaction write the same turn', () => {
  let server: EmbeddedPostgres;
  let storage: MikroOrmStorage;

  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
    storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
  });
  after(async () => {
    await storage.close();
    await server.close();
  });

  const rows = (sql: string, params: unknown[]) => storage.orm.em.getConnection().execute<Record<string, unknown>[]>(sql, params);

  /** A new idle thread with one conversation, and a directive to it. */
  const newWrite = async (key: string, messageId: string | null): Promise<DirectiveWrite> => {
    const created = await storage.writer.createConsoleThread({
      owner: 'alice', key, project: null, title: 't', conversation: { agent: 'claude', model: null, permission_mode: null, effort: null },
    });
    return {
      thread_id: created.thread.id, conversation_id: created.conversation.id, message_id: messageId, author: 'alice', text: 'fix <b>it</b>',
      directory: '/w', permission_mode: 'plan', lease: { holder: 'paths', ms: 60_000 }, origin: { kind: 'schedule', id: 'nightly' },
    };
  };

  /** Everything a thread holds, with its own ids and times replaced by their order of appearance. */
  const stored = async (write: DirectiveWrite, outcome: DirectiveOutcome) => {
    assert.equal(outcome.kind, 'started');
    if (outcome.kind !== 'started') return null;
    const names = new Map<string, string>();
    const key = outcome.answer.key;
    const alike = (value: unknown): unknown => {
      if (typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-/.test(value)) {
        if (!names.has(value)) names.set(value, `#${names.size}`);
        return names.get(value);
      }
      // A time, as the answer writes it or as a row reads back: its form is kept, its value is the clock's.
      if (typeof value === 'string' && /^\d{4}-\d\d-\d\d[T ]/.test(value)) return value.includes('T') ? 'iso time' : 'row time';
      if (value === key) return 'key';
      if (Array.isArray(value)) return value.map(alike);
      if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, alike(v)]));
      return value;
    };
    const thread = [write.thread_id];
    const tables = {
      conversation: await rows(`select permission_mode, turn_running, turn_run_id, turn_holder, turn_expires_at > now() as leased, session_id
        from conversations where id = ?`, [write.conversation_id]),
      messages: await rows('select id, role, text, artifact_id, created_at, origin from messages where thread_id = ? order by id', thread),
      runs: await rows(`select r.id, r.directory, r.status, r.error, r.started_at, r.ended_at, r.message_id from runs r
        join conversations c on c.id = r.conversation_id where c.thread_id = ? order by r.id`, thread),
      model: await rows(`select m.role, m.content from model_messages m join runs r on r.id = m.run_id
        join conversations c on c.id = r.conversation_id where c.thread_id = ? order by m.id`, thread),
      directives: await rows('select message_id, answer, author from directives where thread_id = ?', thread),
      events: await rows('select seq, type, data from events where thread_id = ? order by seq', thread),
    };
    const { answer, message, run, event, runStarted, sessionId } = outcome;
    // The events it answered, as the live stream sends them, and as they read back.
    const [replayedMessage, replayedStarted] = await storage.events.since(write.thread_id, event.seq - 1, 2);
    assert.deepEqual(JSON.stringify([event, runStarted]), JSON.stringify([replayedMessage, replayedStarted]));
    const answered = { answer: { ...answer, thread_id: 'T', conversation_id: 'C' }, message, run: { ...run, conversation_id: 'C' }, event: { ...event, thread_id: 'T' }, runStarted: { ...runStarted, thread_id: 'T' }, sessionId };
    return alike({ tables, answered });
  };

  for (const messageId of ['m1', null]) {
    it(`started, with message_id ${messageId}: the same rows, events and answer`, async () => {
      const viaFunction = await newWrite(`paths-function-${messageId}`, messageId);
      const viaTransaction = await newWrite(`paths-transaction-${messageId}`, messageId);
      const a = await stored(viaFunction, (await startedAtOnce(storage.orm, viaFunction))!);
      const b = await stored(viaTransaction, await writeInTransaction(storage.orm, viaTransaction));
      assert.deepEqual(b, a);
    });
  }

  it('repeated: each path answers a kept message_id with the first answer, and another author as taken', async () => {
    const write = await newWrite('paths-repeated', 'm1');
    const first = await startedAtOnce(storage.orm, write);
    assert.equal(first?.kind, 'started');
    const firstAnswer = first?.kind === 'started' ? first.answer : null;
    for (const path of [startedAtOnce, writeInTransaction]) {
      assert.deepEqual(await path(storage.orm, write), { kind: 'repeated', answer: firstAnswer }, path.name);
      assert.deepEqual(await path(storage.orm, { ...write, author: 'bob' }), { kind: 'message_id_taken' }, path.name);
    }
    const [{ count }] = (await rows('select count(*)::int as count from runs r join conversations c on c.id = r.conversation_id where c.thread_id = ?', [write.thread_id])) as [{ count: number }];
    assert.equal(count, 1, 'one run, however often it was repeated');
  });

  it('busy: the function writes nothing and leaves it to the transaction, which refuses it', async () => {
    const write = await newWrite('paths-busy', null);
    assert.equal((await startedAtOnce(storage.orm, write))?.kind, 'started');
    const before = await rows('select count(*)::int as count from events where thread_id = ?', [write.thread_id]);
    assert.equal(await startedAtOnce(storage.orm, { ...write, message_id: 'm9' }), null);
    assert.deepEqual(await writeInTransaction(storage.orm, { ...write, message_id: 'm9' }), { kind: 'busy' });
    assert.deepEqual(await rows('select count(*)::int as count from events where thread_id = ?', [write.thread_id]), before);
    assert.deepEqual(await rows('select count(*)::int as count from directives where thread_id = ?', [write.thread_id]), [{ count: 0 }]);
  });
});
