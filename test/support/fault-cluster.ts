import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMikroOrmStorage } from '../../adapters/mikro-orm/storage.ts';
import { createPostgresEventBus, type PostgresEventBusOptions } from '../../adapters/postgres/event-bus.ts';
import { createMemoryEventBus } from '../../adapters/memory/event-bus.ts';
import { fixtureWorld } from './fixture-world.ts';
import { findPostgresBinaries, startPrivatePostgres, type PrivatePostgres } from './private-postgres.ts';
import { createScratchDatabase, type ScratchDatabase } from './scratch-database.ts';
import { startService, type TestService } from './service.ts';

/** Where a fault test's database lives: a scratch database, on a private cluster when there is one. */
export interface FaultDatabase {
  readonly url: string;
  /** The private cluster, which a test may stop and start; null on a shared server (TEST_DATABASE_URL). */
  readonly cluster: PrivatePostgres | null;
  /** Runs one statement on the scratch database, on a connection of its own. */
  readonly execute: (sql: string) => Promise<unknown[]>;
  readonly destroy: () => Promise<void>;
}

/** Why fault tests on PostgreSQL cannot run here, or null; `needsCluster` for tests that stop the server. */
export function faultDatabaseUnavailable(needsCluster: boolean): string | null {
  const binaries = findPostgresBinaries();
  if (!('missing' in binaries)) return null;
  if (!needsCluster && process.env.TEST_DATABASE_URL) return null;
  return needsCluster ? binaries.missing : `${binaries.missing}, and TEST_DATABASE_URL is not set`;
}

/** A scratch database holding the fixture world, on a private cluster (preferred) or TEST_DATABASE_URL. */
export async function openFaultDatabase(): Promise<FaultDatabase> {
  const cluster = 'missing' in findPostgresBinaries() ? null : await startPrivatePostgres();
  let scratch: ScratchDatabase | undefined;
  try {
    scratch = await createScratchDatabase(cluster?.url ?? process.env.TEST_DATABASE_URL!, 'console_fault');
    const seed = await createMikroOrmStorage({ clientUrl: scratch.url, pool: 1 });
    await seed.importWorld(fixtureWorld());
    await seed.close();
  } catch (error) {
    await scratch?.drop().catch(() => {});
    await cluster?.destroy();
    throw error;
  }
  const url = scratch.url;
  return {
    url,
    cluster,
    execute: async (sql) => {
      const client = new Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
      await client.connect();
      try {
        return (await client.query(sql)).rows;
      } finally {
        await client.end();
      }
    },
    destroy: async () => {
      // Dropping it also closes the maintenance connection. A private cluster goes anyway: a
      // failed or slow drop (the cluster left stopped by a failed test) is not waited for long.
      if (cluster === null) return scratch!.drop();
      await Promise.race([scratch!.drop().catch(() => {}), sleep(5_000)]);
      await cluster.destroy();
    },
  };
}

/**
 * One service instance on the database: its own connection pool, its own LISTEN connection, its
 * own agents, as in a deployment of several instances.
 */
export async function startInstance(
  database: FaultDatabase,
  env: Record<string, string> = {},
  bus: Partial<Pick<PostgresEventBusOptions, 'backoff'>> = {},
): Promise<TestService> {
  const storage = await createMikroOrmStorage({ clientUrl: database.url, pool: 4 });
  const events = await createPostgresEventBus({ url: database.url, events: storage.events, local: createMemoryEventBus(), ...bus });
  return startService({ CONSOLE_STORAGE: 'postgres', DATABASE_URL: database.url, ...env }, { storage, bus: events });
}

/** Ends every LISTEN connection of the scratch database from the server side; answers how many. */
export async function killBusConnections(database: FaultDatabase): Promise<number> {
  const rows = await database.execute(
    `select pg_terminate_backend(pid) as killed from pg_stat_activity
     where datname = current_database() and application_name = 'console-event-bus' and pid <> pg_backend_pid()`);
  return rows.length;
}

interface PgClient {
  connect(): Promise<void>;
  query(sql: string): Promise<{ rows: unknown[] }>;
  end(): Promise<void>;
}
// `pg` ships no types here; the driver MikroORM already loads.
const { Client } = createRequire(import.meta.url)('pg') as { Client: new (config: { connectionString: string; connectionTimeoutMillis: number }) => PgClient };
