import type { Agent, Channel } from '../domain/model.ts';

/** The service's vocabularies: agents, channels and projects. Small sets, read whole. */
export interface Catalog {
  agents(): Promise<Agent[]>;
  channels(): Promise<Channel[]>;
  projects(): Promise<string[]>;
}
