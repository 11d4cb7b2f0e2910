import type { MikroORM } from '@mikro-orm/postgresql';
import type { MigrationObject } from '@mikro-orm/core';
import { InitialSchema } from './migrations/0001-initial-schema.ts';
import { DirectivesAndEvents } from './migrations/0002-directives-and-events.ts';
import { AgentEnv } from './migrations/0003-agent-env.ts';
import { TurnLeases } from './migrations/0004-turn-leases.ts';
import { ToolCallsAndProjectDirectories } from './migrations/0005-tool-calls-and-project-directories.ts';
import { AgentOffers } from './migrations/0006-agent-offers.ts';

/**
 * Every migration, oldest first, listed explicitly: nothing is discovered on disk, so the schema is
 * the same whether the code runs from source, a bundle or a test. Names are never renamed once shipped.
 */
export const MIGRATIONS: MigrationObject[] = [
  { name: '0001-initial-schema', class: InitialSchema },
  { name: '0002-directives-and-events', class: DirectivesAndEvents },
  { name: '0003-agent-env', class: AgentEnv },
  { name: '0004-turn-leases', class: TurnLeases },
  { name: '0005-tool-calls-and-project-directories', class: ToolCallsAndProjectDirectories },
  { name: '0006-agent-offers', class: AgentOffers },
];

/** The table that records applied migrations. */
export const MIGRATIONS_TABLE = 'mikro_orm_migrations';

/** Applies the pending migrations, each in its own transaction; answers the names applied. */
export async function migrate(orm: MikroORM): Promise<string[]> {
  const applied = await orm.getMigrator().up();
  return applied.map((migration) => migration.name);
}
