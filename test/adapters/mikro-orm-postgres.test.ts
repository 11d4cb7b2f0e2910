import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { MikroORM } from '@mikro-orm/postgresql';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { storageContract } from '../contracts/storage.contract.ts';

const url = process.env.TEST_DATABASE_URL;

if (url === undefined || url === '') {
  describe('storage contract: mikro-orm on PostgreSQL', () => {
    it('runs against a real server', { skip: 'TEST_DATABASE_URL is not set (e.g. postgres://postgres@127.0.0.1:5432/test)' }, () => {});
  });
} else {
  // A database of its own per run, created through the given one and dropped after, so runs never collide.
  const name = `console_test_${randomBytes(6).toString('hex')}`;
  const scratch = new URL(url);
  scratch.pathname = `/${name}`;
  let maintenance: MikroORM;

  before(async () => {
    maintenance = await MikroORM.init({ clientUrl: url, entities: [], discovery: { warnWhenNoEntities: false }, ensureDatabase: false, pool: { min: 0, max: 1 } });
    await maintenance.em.getConnection().execute(`create database "${name}"`);
  });
  after(async () => {
    await maintenance.em.getConnection().execute(`drop database if exists "${name}" with (force)`);
    await maintenance.close(true);
  });

  storageContract('mikro-orm on PostgreSQL', () => createMikroOrmStorage({ clientUrl: scratch.toString(), pool: 4 }));
}
