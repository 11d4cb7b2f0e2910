// `npm run db:migrate`: applies pending migrations to DATABASE_URL, or, when it is unset, to the
// embedded database in DATA_DIR (default ./.data). The service also migrates at start; this is for
// deploying the schema ahead of the code, or checking a database by hand. It composes two adapters
// (the embedded server and MikroORM's migrator), so it lives here, beside the service's own entry.
import { EMBEDDED_POOL_SIZE, startEmbeddedPostgres, type EmbeddedPostgres } from '../adapters/embedded/pglite-server.ts';
import { migrate } from '../adapters/mikro-orm/migrate.ts';
import { openOrm } from '../adapters/mikro-orm/orm.ts';

async function main(): Promise<void> {
  const databaseUrl = process.env.DATABASE_URL || undefined;
  let embedded: EmbeddedPostgres | undefined;
  try {
    if (databaseUrl === undefined) embedded = await startEmbeddedPostgres({ dataDir: process.env.DATA_DIR || './.data' });
    const target = databaseUrl === undefined ? `the embedded database in ${process.env.DATA_DIR || './.data'}` : 'DATABASE_URL';
    // No query time-out: a migration may rightly run long.
    const orm = await openOrm({ clientUrl: databaseUrl ?? embedded!.url, pool: databaseUrl === undefined ? EMBEDDED_POOL_SIZE : 1, queryTimeoutMs: null });
    try {
      const applied = await migrate(orm);
      console.log(applied.length === 0 ? `${target} is up to date` : `applied to ${target}: ${applied.join(', ')}`);
    } finally {
      await orm.close(true);
    }
  } finally {
    await embedded?.close();
  }
}

main().catch((error: unknown) => {
  // The message only: a connection error's text names the host, never a password.
  console.error(`db:migrate failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
