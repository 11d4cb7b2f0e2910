import type { Agent, Channel, Project } from '../domain/model.ts';

/** The service's vocabularies: agents, channels and projects. Small sets, read whole. */
export interface Catalog {
  /** Every agent of the world: its id, its ACP command and environment, and the lists that narrow what it advertises. */
  agents(): Promise<Agent[]>;
  /**
   * Every connected channel with its linked users (the world file's, then the users who linked an address
   * with a code, in byte order), its agents and its places (the world file's, for the memory channel port).
   */
  channels(): Promise<Channel[]>;
  /** Project names, for `GET /projects` and a directive's check. */
  projects(): Promise<string[]>;
  /** One project with its directory on disk (null: the default under `DATA_DIR`), or null when there is no such project. */
  project(name: string): Promise<Project | null>;
}
