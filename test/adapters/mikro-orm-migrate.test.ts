import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EMBEDDED_POOL_SIZE, MEMORY_DATA_DIR, startEmbeddedPostgres } from '../../adapters/embedded/pglite-server.ts';
import { migrate, MIGRATIONS, MIGRATIONS_TABLE } from '../../adapters/mikro-orm/migrate.ts';
import { openOrm } from '../../adapters/mikro-orm/orm.ts';
import { runStatement } from '../../adapters/mikro-orm/sql.ts';
import { createScratchDatabase } from '../support/scratch-database.ts';

/** A fresh database on embedded PGlite, and on PostgreSQL when TEST_DATABASE_URL is set. */
const databases: { name: string; open: () => Promise<{ url: string; close: () => Promise<void> }> }[] = [
  {
    name: 'embedded PGlite',
    open: async () => {
      const server = await startEmbeddedPostgres({ dataDir: MEMORY_DATA_DIR });
      return { url: server.url, close: () => server.close() };
    },
  },
];
const postgres = process.env.TEST_DATABASE_URL;
if (postgres) {
  databases.push({
    name: 'PostgreSQL',
    open: async () => {
      const scratch = await createScratchDatabase(postgres, 'console_migrate');
      return { url: scratch.url, close: () => scratch.drop() };
    },
  });
}

for (const database of databases) {
  describe(`migrations on ${database.name}`, () => {
    it('apply every migration to a fresh database, nothing on the next start, and only what is missing after an upgrade', async () => {
      const db = await database.open();
      const orm = await openOrm({ clientUrl: db.url, pool: EMBEDDED_POOL_SIZE });
      try {
        const names = MIGRATIONS.map((migration) => migration.name);
        assert.deepEqual(await migrate(orm), names);
        assert.deepEqual(await migrate(orm), []);
        // An older release's database: the newest migration undone (its own `down`), so it is pending again.
        const { Migrator } = await import('@mikro-orm/migrations');
        await new Migrator(orm.em).down();
        const before = await runStatement<{ name: string }>(orm, `select name from ${MIGRATIONS_TABLE} order by id`, []);
        assert.deepEqual(before.map((row) => row.name), names.slice(0, -1));
        assert.deepEqual(await migrate(orm), [names.at(-1)]);
        assert.deepEqual(await migrate(orm), []);
      } finally {
        await orm.close(true);
        await db.close();
      }
    });

    it('a start on an up-to-date database sends one statement for its migrations, and no DDL', async () => {
      const db = await database.open();
      const first = await openOrm({ clientUrl: db.url, pool: EMBEDDED_POOL_SIZE });
      try {
        await migrate(first);
      } finally {
        await first.close(true);
      }
      // The second start, counted: what the ORM sends from the migration check on.
      const sent: string[] = [];
      const orm = await openOrm({ clientUrl: db.url, pool: EMBEDDED_POOL_SIZE, onQuery: (sql) => sent.push(sql) });
      try {
        assert.deepEqual(await migrate(orm), []);
        assert.deepEqual(sent, [`select name from ${MIGRATIONS_TABLE}`]);
      } finally {
        await orm.close(true);
        await db.close();
      }
    });
  });
}
