import type { Issue } from '../../domain/result.ts';
import { XMPP_KIND } from '../../domain/xmpp.ts';
import type { WorldFile } from './schema.ts';

/**
 * The checks a schema cannot make: unique ids, references that resolve, vocabularies that hold, and
 * fork chains without cycles whose cutoffs are messages of the parent's ledger. Each issue names
 * the path of the offending value.
 */
export function referenceIssues(world: WorldFile): Issue[] {
  const issues: Issue[] = [];
  const problem = (path: string, message: string) => issues.push({ path, message });

  const unique = <T extends { id: string }>(list: readonly T[], path: string, seen = new Set<string>()) => {
    list.forEach((item, i) => {
      if (seen.has(item.id)) problem(`${path}.${i}.id`, `repeats the id ${item.id}`);
      seen.add(item.id);
    });
    return seen;
  };

  const users = unique(world.users, 'users');
  const agents = new Map(world.agents.map((agent) => [agent.id, agent]));
  unique(world.agents, 'agents');
  const channels = unique(world.channels, 'channels');
  const installations = unique(world.installations, 'installations');
  const artifacts = unique(world.artifacts, 'artifacts');
  const threads = new Map(world.threads.map((thread) => [thread.id, thread]));
  unique(world.threads, 'threads');
  const projects = new Set<string>();
  world.projects.forEach((project, i) => {
    const projectName = typeof project === 'string' ? project : project.name;
    if (projects.has(projectName)) problem(`projects.${i}`, `repeats the project ${projectName}`);
    projects.add(projectName);
  });
  const user = (id: string, path: string) => users.has(id) || problem(path, `names no user (${id})`);

  world.agents.forEach((agent, i) => {
    const { default_permission_mode: mode, permission_modes: modes } = agent;
    if (mode !== null && modes !== null && !modes.includes(mode)) {
      problem(`agents.${i}.default_permission_mode`, 'must be one of the agent permission_modes');
    }
    agent.env_pass.forEach((name, j) => {
      if (Object.hasOwn(agent.env, name)) problem(`agents.${i}.env_pass.${j}`, `is also set in env (${name}): name it once`);
    });
  });
  world.channels.forEach((channel, i) => {
    channel.agents.forEach((id, j) => agents.has(id) || problem(`channels.${i}.agents.${j}`, `names no agent (${id})`));
    channel.linked_users.forEach((id, j) => user(id, `channels.${i}.linked_users.${j}`));
    xmppChannelIssues(channel, `channels.${i}`, user, problem);
  });
  world.installations.forEach((installation, i) => user(installation.owner, `installations.${i}.owner`));
  world.artifacts.forEach((artifact, i) => {
    user(artifact.owner, `artifacts.${i}.owner`);
    if (!installations.has(artifact.installation)) problem(`artifacts.${i}.installation`, 'names no installation');
  });

  const messageIds = new Set<string>();
  const conversationIds = new Set<string>();
  const keys = new Set<string>();
  world.threads.forEach((thread, i) => {
    const at = `threads.${i}`;
    user(thread.owner, `${at}.owner`);
    thread.members.forEach((id, j) => user(id, `${at}.members.${j}`));
    if (!channels.has(thread.channel)) problem(`${at}.channel`, `names no channel (${thread.channel})`);
    if (thread.project !== null && !projects.has(thread.project)) problem(`${at}.project`, `names no project (${thread.project})`);
    if (thread.key !== null) {
      const scoped = `${thread.owner}\u0000${thread.key}`;
      if (keys.has(scoped)) problem(`${at}.key`, 'repeats a key of the same owner');
      keys.add(scoped);
    }
    forkIssues(thread, at, threads, problem);
    unique(thread.messages, `${at}.messages`, messageIds);
    thread.messages.forEach((message, j) => {
      if (message.artifact_id !== null && !artifacts.has(message.artifact_id)) problem(`${at}.messages.${j}.artifact_id`, 'names no artifact');
    });
    unique(thread.conversations, `${at}.conversations`, conversationIds);
    thread.conversations.forEach((conversation, j) => {
      const cat = `${at}.conversations.${j}`;
      const agent = agents.get(conversation.agent);
      if (agent === undefined) return problem(`${cat}.agent`, `names no agent (${conversation.agent})`);
      // Checked against the lists the world gives; what an agent advertises is only known once it runs.
      const outside = (list: readonly string[] | null, value: string | null) => value !== null && list !== null && !list.includes(value);
      if (outside(agent.models, conversation.model)) problem(`${cat}.model`, `is not a model of ${agent.id}`);
      if (outside(agent.permission_modes, conversation.permission_mode)) problem(`${cat}.permission_mode`, `is not a permission mode of ${agent.id}`);
      if (outside(agent.efforts, conversation.effort)) problem(`${cat}.effort`, `is not an effort of ${agent.id}`);
      const runs = new Set(conversation.runs.map((run) => run.id));
      conversation.pending.forEach((pending, k) => {
        if (pending.run_id !== null && !runs.has(pending.run_id)) problem(`${cat}.pending.${k}.run_id`, 'names no run of this conversation');
      });
    });
  });
  return issues;
}

type Thread = WorldFile['threads'][number];
type Channel = WorldFile['channels'][number];

/** An xmpp channel has its `xmpp` object and takes its linked users and places from the server; no other kind has either. */
function xmppChannelIssues(channel: Channel, at: string, user: (id: string, path: string) => unknown, problem: (path: string, message: string) => void): void {
  if (channel.kind !== XMPP_KIND) {
    if (channel.xmpp !== undefined) problem(`${at}.xmpp`, `is only for a channel of kind "${XMPP_KIND}"`);
    if (channel.links !== undefined) problem(`${at}.links`, `is only for a channel of kind "${XMPP_KIND}"`);
    return;
  }
  if (channel.xmpp === undefined) return problem(`${at}.xmpp`, 'is required for an xmpp channel: {service, domain, muc, jid, password_env, nick}');
  if (channel.linked_users.length > 0) problem(`${at}.linked_users`, 'must be absent for an xmpp channel: its linked users are the keys of links');
  if (channel.addresses.length > 0) problem(`${at}.addresses`, "must be absent for an xmpp channel: its places are the server's rooms");
  for (const id of Object.keys(channel.links ?? {})) user(id, `${at}.links.${id}`);
}

/** A fork names an existing thread, has a cutoff that is a message of that thread's ledger, and no cycle. */
function forkIssues(thread: Thread, at: string, threads: Map<string, Thread>, problem: (path: string, message: string) => void): void {
  if (thread.fork_of === null) {
    if (thread.fork_cutoff !== null) problem(`${at}.fork_cutoff`, 'must be null when fork_of is null');
    return;
  }
  const parent = threads.get(thread.fork_of);
  if (parent === undefined) return problem(`${at}.fork_of`, 'names no thread');
  if (thread.fork_cutoff === null) return problem(`${at}.fork_cutoff`, 'must name a message of the parent thread');
  const seen = new Set([thread.id]);
  let inLedger = false;
  for (let t: Thread | undefined = parent; t !== undefined; t = t.fork_of === null ? undefined : threads.get(t.fork_of)) {
    if (seen.has(t.id)) return problem(`${at}.fork_of`, 'makes a cycle of forks');
    seen.add(t.id);
    if (t.messages.some((message) => message.id === thread.fork_cutoff)) inLedger = true;
  }
  if (!inLedger) problem(`${at}.fork_cutoff`, "must name a message of the parent thread's ledger");
}
