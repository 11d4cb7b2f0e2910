import { after, describe, it } from 'node:test';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { storageContract } from '../contracts/storage.contract.ts';
import { createScratchDatabase, type ScratchDatabase } from '../support/scratch-database.ts';

const url = process.env.TEST_DATABASE_URL;

if (url === undefined || url === '') {
  describe('storage contract: mikro-orm on PostgreSQL', () => {
    it('runs against a real server', { skip: 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)' }, () => {});
  });
} else {
  let scratch: ScratchDatabase | undefined;
  after(() => scratch?.drop());
  storageContract('mikro-orm on PostgreSQL', async () => {
    scratch = await createScratchDatabase(url);
    return createMikroOrmStorage({ clientUrl: scratch.url, pool: 4 });
  });
}
