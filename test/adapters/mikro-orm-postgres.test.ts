import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { transaction } from '../../adapters/mikro-orm/transaction.ts';
import { createPostgresEventBus } from '../../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import type { Storage } from '../../ports/storage.ts';
import { storageWriterContract } from '../contracts/storage-writer.contract.ts';
import { directiveQueueContract } from '../contracts/directive-queue.contract.ts';
import { eventBusContract } from '../contracts/event-bus.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const url = process.env.TEST_DATABASE_URL;
const SKIP = 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';

if (url === undefined || url === '') {
  for (const suite of ['storage', 'storage writer', 'event log', 'event bus (LISTEN/NOTIFY)', 'transaction conflicts', 'directive queue']) {
    describe(`${suite} contract: mikro-orm on PostgreSQL`, () => {
      it('runs against a real server', { skip: SKIP }, () => {});
    });
  }
} else {
  // A scratch database per suite, all dropped at the end of the file.
  const scratches: ScratchDatabase[] = [];
  after(async () => {
    for (const scratch of scratches) await scratch.drop();
  });
  const scratchStorage = async () => {
    const scratch = await createScratchDatabase(url);
    scratches.push(scratch);
    // Statements named, as the service opens PostgreSQL by default (DATABASE_PREPARED_STATEMENTS).
    return { scratch, storage: await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4, namedStatements: true }) };
  };
  const storage = async (): Promise<Storage> => (await scratchStorage()).storage;

  describe('transaction conflicts contract: mikro-orm on PostgreSQL', () => {
    // Issue 24: mixes of summons and directives got 500 `40P01 deadlock detected`. Writers now lock in one
    // order; a deadlock that still happens (here made on purpose) is run again, never answered as a failure.
    it('two transactions that lock two rows in opposite orders both commit: the deadlock victim is run again', async () => {
      const { storage: s } = await scratchStorage();
      const connection = s.orm.em.getConnection();
      await connection.execute('create table lock_probe (id int primary key, n int not null)');
      await connection.execute('insert into lock_probe values (1, 0), (2, 0)');
      let runs = 0;
      let locked = 0;
      let bothLocked: () => void;
      const barrier = new Promise<void>((resolve) => (bothLocked = resolve));
      const crossing = (first: number, second: number) => transaction(s.orm, async (sql) => {
        runs += 1;
        await sql('update lock_probe set n = n + 1 where id = ?', [first]);
        // Each holds its first row before either asks for its second: a certain deadlock, on the first try.
        if (++locked === 2) bothLocked();
        await barrier;
        await sql('update lock_probe set n = n + 1 where id = ?', [second]);
        return first;
      });
      assert.deepEqual(await Promise.all([crossing(1, 2), crossing(2, 1)]), [1, 2]);
      assert.equal(runs, 3, 'the victim ran once more');
      const rows = await connection.execute<{ id: number; n: number }[]>('select id, n from lock_probe order by id');
      assert.deepEqual(rows.map((r) => r.n), [2, 2], "each committed once: the victim's first try left nothing");
    });
  });

  storageContract('mikro-orm on PostgreSQL', storage);
  storageWriterContract('mikro-orm on PostgreSQL', storage);
  eventLogContract('mikro-orm on PostgreSQL', storage);
  // Two storages over one database: two instances.
  directiveQueueContract('mikro-orm on PostgreSQL', async () => {
    const { scratch, storage: first } = await scratchStorage();
    const opened: Storage[] = [first];
    return {
      storage: first,
      reopen: async () => {
        const again = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 });
        opened.push(again);
        return again;
      },
      close: async () => { for (const s of opened) await s.close(); },
    };
  });
  eventBusContract('LISTEN/NOTIFY bus on PostgreSQL', async () => {
    const { scratch, storage } = await scratchStorage();
    const options = { url: scratch.url, events: storage.events, backoff: { minMs: 50, maxMs: 500 } };
    return {
      storage,
      bus: await createPostgresEventBus({ ...options, local: createMemoryEventBus() }),
      peer: await createPostgresEventBus({ ...options, local: createMemoryEventBus() }),
      // Ends every bus connection of the scratch database from the server side, as a restart or a proxy would.
      dropConnections: async () => {
        await storage.orm.em.getConnection().execute(
          `select pg_terminate_backend(pid) from pg_stat_activity
           where datname = current_database() and application_name = 'console-event-bus'`);
      },
    };
  });
}
