import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres, type EmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { sha256 } from '../support/ids.ts';
import type { Storage } from '../../ports/storage.ts';
import { fixtureWorld } from '../support/fixture-world.ts';
// @ts-expect-error: plain JavaScript, run in the database's thread; its JSDoc types its exports.
import { statementCache } from '../../adapters/embedded/statement-cache.mjs';

// Plans kept on the embedded database (adapters/embedded/statement-cache.mjs): an unnamed Parse
// becomes a named statement of the one session, prepared once per text and bound by name after;
// the driver is answered as if nothing had changed.

function message(type: string, body: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int16 = (n: number) => Buffer.from([n >> 8, n & 255]);
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
/** A statement as the driver sends it: Parse (unnamed), Bind, Describe (portal), Execute, Sync. */
function statement(sql: string, value: string): Buffer {
  return Buffer.concat([
    message('P', Buffer.concat([Buffer.from(`\0${sql}\0`), int16(0)])),
    message('B', Buffer.concat([Buffer.from('\0\0'), int16(0), int16(1), int32(Buffer.byteLength(value)), Buffer.from(value), int16(0)])),
    message('D', Buffer.from('P\0')),
    message('E', Buffer.concat([Buffer.from('\0'), int32(0)])),
    message('S', Buffer.alloc(0)),
  ]);
}
/** The types of an answer's messages, in order. */
function typesOf(answer: Buffer): string {
  let types = '';
  for (let at = 0; at < answer.length; at += 1 + answer.readInt32BE(at + 1)) types += String.fromCharCode(answer[at]!);
  return types;
}
/** The text of the first DataRow's first column. */
function firstValue(answer: Buffer): string {
  for (let at = 0; at < answer.length; at += 1 + answer.readInt32BE(at + 1)) {
    if (answer[at] === 0x44) return answer.subarray(at + 11, at + 11 + answer.readInt32BE(at + 7)).toString();
  }
  throw new Error('no row');
}

describe('the embedded statement cache', () => {
  let db: PGlite;
  before(async () => {
    db = await PGlite.create();
  });
  after(() => db.close());
  // Each test's cache names its statements from 1: the session starts each test with none.
  beforeEach(() => db.exec('deallocate all'));

  const run = async (cache: ReturnType<typeof statementCache>, bytes: Buffer) => {
    const plan = cache.rewrite(bytes, null);
    const answer = plan.bytes.length === 0 ? Buffer.alloc(0) : Buffer.from(await db.execProtocolRaw(plan.bytes));
    return plan.answered(answer) as Buffer;
  };
  const preparedNames = async () => (await db.query<{ name: string }>('select name from pg_prepared_statements order by name')).rows.map((r) => r.name);

  it('prepares a statement once and answers each later one as the driver expects, with its own values', async () => {
    const cache = statementCache(10);
    const plain = Buffer.from(await db.execProtocolRaw(statement('select $1::int * 2 as n', '21')));
    const first = await run(cache, statement('select $1::int * 2 as n', '21'));
    const second = await run(cache, statement('select $1::int * 2 as n', '50'));
    assert.equal(typesOf(first), typesOf(plain), 'the same messages as the statement sent as it came');
    assert.equal(typesOf(second), typesOf(plain));
    assert.equal(firstValue(first), '42');
    assert.equal(firstValue(second), '100');
    assert.equal(cache.size, 1);
    assert.equal((await preparedNames()).length, 1, 'one plan in the session');
  });

  it('keeps at most its limit, closing the least recently used once the session is idle', async () => {
    const cache = statementCache(2);
    for (const k of [1, 2, 1, 3]) await run(cache, statement(`select $1::int + ${k} as n`, '1'));
    assert.equal(cache.size, 2);
    const closing = cache.closing() as Buffer;
    assert.equal(typesOf(Buffer.from(await db.execProtocolRaw(closing))), '3Z', 'a CloseComplete, then ready');
    assert.equal(cache.closing(), null, 'closed once');
    assert.deepEqual(await preparedNames(), ['console_plan_1', 'console_plan_3'], 'the one used least recently is gone: +2');
    assert.equal(firstValue(await run(cache, statement('select $1::int + 1 as n', '1'))), '2', 'the one used again is kept');
  });

  it('sends a failed Parse as it is, keeps nothing of it, and leaves batches of other shapes as they came', async () => {
    const cache = statementCache(10);
    const failed = await run(cache, statement('select nonsense from nowhere where x = $1', '1'));
    assert.match(typesOf(failed), /^EZ$/);
    assert.equal(cache.size, 0);
    const query = message('Q', Buffer.from('select 1\0'));
    assert.equal(cache.rewrite(query, null).bytes, query, 'a simple query is not changed');
    const named = Buffer.concat([message('P', Buffer.concat([Buffer.from('mine\0select 1\0'), int16(0)])), message('S', Buffer.alloc(0))]);
    assert.equal(cache.rewrite(named, null).bytes, named, 'a named Parse is the client\'s own');
  });

  it('lets go of a statement it kept that is gone from the session, and prepares it anew', async () => {
    const cache = statementCache(10);
    await run(cache, statement('select $1::int - 1 as n', '5'));
    await run(cache, statement('select $1::int - 2 as n', '5'));
    await db.exec('deallocate console_plan_1');
    const answer = await run(cache, statement('select $1::int - 1 as n', '5'));
    assert.match(typesOf(answer), /E/, 'that one statement fails');
    assert.equal(cache.size, 1, 'it alone is let go of');
    assert.equal(firstValue(await run(cache, statement('select $1::int - 1 as n', '5'))), '4', 'and the next is prepared anew');
  });
});

describe('a turn\'s statements on the embedded database', () => {
  let server: EmbeddedPostgres;
  let storage: Storage;
  before(async () => {
    server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR, maxConnections: EMBEDDED_POOL_SIZE + 3 });
    storage = await createMikroOrmStorage({ clientUrl: server.url, pool: EMBEDDED_POOL_SIZE });
    await storage.importWorld(fixtureWorld());
  });
  after(async () => {
    await storage.close();
    await server.close();
  });

  it('the credential lookup, sent prepared, is planned once however often it runs', async () => {
    const client = new pg.Client(server.url);
    await client.connect();
    try {
      const credentialPlans = async () => (await client.query(
        "select count(*)::int as n from pg_prepared_statements where statement like '%with touched as%'")).rows[0]!.n;
      const before = await credentialPlans();
      for (let i = 0; i < 5; i++) await storage.accounts.userByCredential(sha256(`token-${i}`), new Date().toISOString());
      assert.equal(await credentialPlans(), before === 0 ? 1 : before);
      assert.equal(await credentialPlans(), 1);
    } finally {
      await client.end();
    }
  });
});
