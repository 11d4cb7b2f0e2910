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
export function mikroOrmCatalog(orm: MikroORM, options: { readonly keep?: boolean } = {}): Catalog & { forget(): void } {
  const readAgents = () => runStatement<Agent>(orm, `select ${AGENT} from agents order by id collate "C"`, []);
  const readProjects = () => runStatement<Project>(orm, 'select name, directory, repo, base from projects order by name collate "C"', []);
  if (options.keep !== true) {
    return {
      agents: readAgents,
      channels: () => runStatement<Channel>(orm, `select ${CHANNEL_LINKED} from channels c order by id collate "C"`, []),
      projects: async () =>
        (await runStatement<{ name: string }>(orm, 'select name from projects order by name collate "C"', [])).map((row) => row.name),
      project: async (name) => (await runStatement<Project>(orm, 'select name, directory, repo, base from projects where name = ?', [name]))[0] ?? null,
      forget: () => {},
    };
  }
  // Kept: the agents and projects read once, then answered from memory until `forget`. A read that fails is
  // not kept (the next asks again), nor one that began before the last `forget`.
  let agents: Promise<Agent[]> | null = null;
  let projects: Promise<Project[]> | null = null;
  let generation = 0;
  const keep = <T>(read: () => Promise<T>, set: (kept: Promise<T> | null) => void): Promise<T> => {
    const at = generation;
    const pending = read();
    set(pending);
    pending.catch(() => {
      if (at === generation) set(null);
    });
    return pending;
  };
  const allProjects = (): Promise<Project[]> => projects ?? keep(readProjects, (kept) => (projects = kept));
  return {
    agents: async () => [...(await (agents ?? keep(readAgents, (kept) => (agents = kept))))],
    channels: () => runStatement<Channel>(orm, `select ${CHANNEL_LINKED} from channels c order by id collate "C"`, []),
    projects: async () => (await allProjects()).map((project) => project.name),
    project: async (name) => (await allProjects()).find((project) => project.name === name) ?? null,
    forget: () => {
      generation += 1;
      agents = null;
      projects = null;
    },
  };
}
