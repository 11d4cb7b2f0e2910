import type { MikroORM } from '@mikro-orm/postgresql';
import type { Agent, Channel, Project } from '../../domain/model.ts';
import type { Catalog } from '../../ports/catalog.ts';
import { runStatement } from './sql.ts';
import { AGENT, CHANNEL } from './columns.ts';

// Ordered by id in byte order (collate "C"), as the memory adapter sorts: the same world answers the
// same lists whichever storage holds it, whatever the database's default collation.

/** A channel's columns, its `linked_users` followed by the users who linked themselves (channel_links), in byte order. */
const CHANNEL_LINKED = CHANNEL.replace(
  /\blinked_users\b/,
  `linked_users || array(select l.user_id from channel_links l where l.channel = c.id and not (l.user_id = any(c.linked_users)) order by l.user_id collate "C") as linked_users`,
);

/** The vocabularies: small tables, each read whole in one query. */
export function mikroOrmCatalog(orm: MikroORM): Catalog {
  return {
    agents: () =>
      runStatement<Agent>(orm, `select ${AGENT} from agents order by id collate "C"`, []),
    channels: () =>
      runStatement<Channel>(orm, `select ${CHANNEL_LINKED} from channels c order by id collate "C"`, []),
    projects: async () =>
      (await runStatement<{ name: string }>(orm, 'select name from projects order by name collate "C"', [])).map((row) => row.name),
    project: async (name) => (await runStatement<Project>(orm, 'select name, directory, repo, base from projects where name = ?', [name]))[0] ?? null,
  };
}
