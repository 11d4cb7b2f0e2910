import type { MikroORM } from '@mikro-orm/postgresql';
import type { Constructor, MigrationObject } from '@mikro-orm/core';
import type { Migration } from '@mikro-orm/migrations';
import { runStatement } from './sql.ts';

/** A migration by name, its class loaded only when migrations run. */
interface LazyMigration {
  readonly name: string;
  readonly load: () => Promise<Constructor<Migration>>;
}

/**
 * Every migration, oldest first, listed explicitly: nothing is discovered on disk, so the schema is
 * the same whether the code runs from source, a bundle or a test. Names are never renamed once shipped.
 * The classes (and MikroORM's migrator, umzug with it) are imported only when one is pending: a start
 * on an up-to-date database loads none of them.
 */
export const MIGRATIONS: readonly LazyMigration[] = [
  { name: '0001-initial-schema', load: async () => (await import('./migrations/0001-initial-schema.ts')).InitialSchema },
  { name: '0002-directives-and-events', load: async () => (await import('./migrations/0002-directives-and-events.ts')).DirectivesAndEvents },
  { name: '0003-agent-env', load: async () => (await import('./migrations/0003-agent-env.ts')).AgentEnv },
  { name: '0004-turn-leases', load: async () => (await import('./migrations/0004-turn-leases.ts')).TurnLeases },
  { name: '0005-tool-calls-and-project-directories', load: async () => (await import('./migrations/0005-tool-calls-and-project-directories.ts')).ToolCallsAndProjectDirectories },
  { name: '0006-agent-offers', load: async () => (await import('./migrations/0006-agent-offers.ts')).AgentOffers },
  { name: '0007-moves-and-deliveries', load: async () => (await import('./migrations/0007-moves-and-deliveries.ts')).MovesAndDeliveries },
  { name: '0008-directive-queue', load: async () => (await import('./migrations/0008-directive-queue.ts')).DirectiveQueue },
  { name: '0009-channel-links', load: async () => (await import('./migrations/0009-channel-links.ts')).ChannelLinks },
  { name: '0010-thread-worktrees', load: async () => (await import('./migrations/0010-thread-worktrees.ts')).ThreadWorktrees },
  { name: '0011-unsent-prompts', load: async () => (await import('./migrations/0011-unsent-prompts.ts')).UnsentPrompts },
  { name: '0012-chat-cursors', load: async () => (await import('./migrations/0012-chat-cursors.ts')).ChatCursors },
  { name: '0013-chat-occupants', load: async () => (await import('./migrations/0013-chat-occupants.ts')).ChatOccupants },
  { name: '0014-agent-network', load: async () => (await import('./migrations/0014-agent-network.ts')).AgentNetwork },
  { name: '0015-directive-authors', load: async () => (await import('./migrations/0015-directive-authors.ts')).DirectiveAuthors },
  { name: '0016-delivery-asks', load: async () => (await import('./migrations/0016-delivery-asks.ts')).DeliveryAsks },
  { name: '0017-accounts', load: async () => (await import('./migrations/0017-accounts.ts')).Accounts },
  { name: '0018-rewinds', load: async () => (await import('./migrations/0018-rewinds.ts')).Rewinds },
  { name: '0019-event-keys', load: async () => (await import('./migrations/0019-event-keys.ts')).EventKeys },
  { name: '0020-channel-defaults', load: async () => (await import('./migrations/0020-channel-defaults.ts')).ChannelDefaults },
  { name: '0021-hooks', load: async () => (await import('./migrations/0021-hooks.ts')).Hooks },
  { name: '0022-schedules', load: async () => (await import('./migrations/0022-schedules.ts')).Schedules },
  { name: '0023-thread-management', load: async () => (await import('./migrations/0023-thread-management.ts')).ThreadManagement },
  { name: '0024-served-rooms', load: async () => (await import('./migrations/0024-served-rooms.ts')).ServedRooms },
  { name: '0025-webhooks', load: async () => (await import('./migrations/0025-webhooks.ts')).Webhooks },
  { name: '0026-directive-origin', load: async () => (await import('./migrations/0026-directive-origin.ts')).DirectiveOrigin },
  { name: '0027-turn-start-function', load: async () => (await import('./migrations/0027-turn-start-function.ts')).TurnStartFunction },
];

/** The table that records applied migrations. */
export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** PostgreSQL's "undefined_table": the migrations table does not exist yet (a fresh database). */
const UNDEFINED_TABLE = '42P01';

/**
 * Whether every migration is recorded as applied (a database without the table has none). One
 * statement, one round trip: a start on an up-to-date database sends nothing else for migrations
 * (test/adapters/mikro-orm-migrate.test.ts counts it).
 */
async function upToDate(orm: MikroORM): Promise<boolean> {
  let rows: { name: string }[];
  try {
    rows = await runStatement<{ name: string }>(orm, `select name from ${MIGRATIONS_TABLE}`, []);
  } catch (error) {
    if ((error as { code?: unknown }).code === UNDEFINED_TABLE) return false;
    throw error;
  }
  const applied = new Set(rows.map((row) => row.name));
  return MIGRATIONS.every((migration) => applied.has(migration.name));
}

/** Applies the pending migrations, each in its own transaction; answers the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  if (await upToDate(orm)) return [];
  const [{ Migrator }, classes] = await Promise.all([
    import('@mikro-orm/migrations'),
    Promise.all(MIGRATIONS.map(async ({ name, load }): Promise<MigrationObject> => ({ name, class: await load() }))),
  ]);
  orm.config.set('migrations', { ...orm.config.get('migrations'), migrationsList: classes });
  const applied = await new Migrator(orm.em).up();
  return applied.map((migration) => migration.name);
}
