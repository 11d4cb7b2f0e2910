import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createMikroOrmStorage, type MikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { runStatement } from '../../adapters/mikro-orm/sql.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const url = process.env.TEST_DATABASE_URL;
const SKIP = url === undefined || url === '' ? 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)' : false;

/**
 * On a PostgreSQL server the hot path's statements are prepared once per connection, by name
 * (DATABASE_PREPARED_STATEMENTS=named, the default): the session keeps them, and a statement sent again is only
 * bound and run. `unnamed` keeps none, for a pooler in transaction mode that would not.
 */
describe('prepared statements on PostgreSQL', { skip: SKIP }, () => {
  const scratches: ScratchDatabase[] = [];
  const opened: MikroOrmStorage[] = [];
  after(async () => {
    for (const storage of opened) await storage.close();
    for (const scratch of scratches) await scratch.drop();
  });

  /** A storage on one connection (so the session asked is the one that ran the lookups), and what that session keeps. */
  const oneConnection = async (namedStatements: boolean) => {
    const scratch = await createScratchDatabase(url!);
    scratches.push(scratch);
    const storage = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1, namedStatements });
    opened.push(storage);
    const kept = async () => (await runStatement<{ name: string }>(storage.orm,
      "select name, statement from pg_prepared_statements where name like 'console\\_%' order by name", [])).map((row) => row.name);
    return { storage, kept };
  };

  it('named: a credential lookup is prepared on the session once, however often it runs, and answers as before', async () => {
    const { storage, kept } = await oneConnection(true);
    assert.deepEqual(await kept(), []);
    const now = new Date().toISOString();
    for (let i = 0; i < 3; i++) assert.equal(await storage.accounts.userByCredential('no-such-hash', now), null);
    const names = await kept();
    assert.equal(names.length, 1, names.join(', '));
    assert.match(names[0]!, /^console_[0-9a-f]{16}$/);
  });

  it('unnamed: nothing is kept on the session', async () => {
    const { storage, kept } = await oneConnection(false);
    const now = new Date().toISOString();
    for (let i = 0; i < 3; i++) assert.equal(await storage.accounts.userByCredential('no-such-hash', now), null);
    assert.deepEqual(await kept(), []);
  });
});
