import { after, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus } from '../../adapters/postgres/event-bus.ts';
import type { Storage } from '../../ports/storage.ts';
import { consoleWriterContract } from '../contracts/console-writer.contract.ts';
import { eventBusContract } from '../contracts/event-bus.contract.ts';
import { eventLogContract } from '../contracts/event-log.contract.ts';
import { storageContract } from '../contracts/storage.contract.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const url = process.env.TEST_DATABASE_URL;
const SKIP = 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)';

if (url === undefined || url === '') {
  for (const suite of ['storage', 'console writer', 'event log', 'event bus (LISTEN/NOTIFY)']) {
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
    return { scratch, storage: await createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 }) };
  };
  const storage = async (): Promise<Storage> => (await scratchStorage()).storage;

  storageContract('mikro-orm on PostgreSQL', storage);
  consoleWriterContract('mikro-orm on PostgreSQL', storage);
  eventLogContract('mikro-orm on PostgreSQL', storage);
  eventBusContract('LISTEN/NOTIFY bus on PostgreSQL', async () => {
    const { scratch, storage } = await scratchStorage();
    const options = { url: scratch.url, events: storage.events, backoff: { minMs: 50, maxMs: 500 } };
    return {
      storage,
      bus: await createPostgresEventBus(options),
      peer: await createPostgresEventBus(options),
      // Ends every bus connection of the scratch database from the server side, as a restart or a proxy would.
      dropConnections: async () => {
        await storage.orm.em.getConnection().execute(
          `select pg_terminate_backend(pid) from pg_stat_activity
           where datname = current_database() and application_name = 'console-event-bus'`);
      },
    };
  });
}
