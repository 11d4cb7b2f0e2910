import type { MikroORM } from '@mikro-orm/postgresql';
import type { Agent, Channel, Project } from '../../domain/model.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { select } from './sql.ts';

// Ordered by id in byte order (collate "C"), as the memory adapter sorts: the same world answers the
// same lists whichever storage holds it, whatever the database's default collation.

/** The vocabularies: small tables, each read whole in one query. */
export function mikroOrmCatalog(orm: MikroORM): Catalog {
  return {
    agents: () =>
      select<Agent>(orm, `select id, models, efforts, permission_modes, default_permission_mode, command, env, env_pass
        from agents order by id collate "C"`, []),
    channels: () =>
      select<Channel>(orm, `select id, kind, name, shared, browsable, agents, linked_users, addresses
        from channels order by id collate "C"`, []),
    projects: async () =>
      (await select<{ name: string }>(orm, 'select name from projects order by name collate "C"', [])).map((row) => row.name),
    project: async (name) => (await select<Project>(orm, 'select name, directory from projects where name = ?', [name]))[0] ?? null,
  };
}
