import type { Issue } from '../../domain/result.ts';
import { routeOf } from '../../domain/vocabulary.ts';
import { BARE_JID_PATTERN, XMPP_KIND } from '../../domain/xmpp.ts';
import { SLACK_KIND, SLACK_USER_PATTERN } from '../../domain/slack.ts';
import type { WorldFile } from './schema.ts';

/** The service's own secret variables: no agent may name one in `env_pass`. */
export const SERVICE_SECRETS: readonly string[] = [
  'OIDC_CLIENT_SECRET', 'DATABASE_URL', 'METRICS_TOKEN', 'DEMO_XMPP_PASSWORD', 'DEMO_SLACK_APP_TOKEN', 'DEMO_SLACK_BOT_TOKEN',
];

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
    chatChannelIssues(channel, `channels.${i}`, user, problem);
    if (channel.defaults !== undefined && channel.defaults !== null) defaultsIssues(channel, `channels.${i}.defaults`, { agents, projects }, problem);
  });
  // A chat channel's secrets are the service's own: no agent is handed them, even when it names them.
  const secrets = new Map(world.channels.flatMap((channel) => [
    ...(channel.xmpp === undefined ? [] : [[channel.xmpp.password_env, channel.id] as const]),
    ...(channel.slack === undefined ? [] : [[channel.slack.app_token_env, channel.id] as const, [channel.slack.bot_token_env, channel.id] as const]),
  ]));
  world.agents.forEach((agent, i) => agent.env_pass.forEach((name, j) => {
    const channel = secrets.get(name);
    if (channel !== undefined) problem(`agents.${i}.env_pass.${j}`, `names ${name}, a secret of the channel ${channel}: an agent is never given a channel's credentials`);
    if (SERVICE_SECRETS.includes(name)) problem(`agents.${i}.env_pass.${j}`, `names ${name}, a secret of the service itself: an agent is never given the service's credentials`);
  }));
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

/** What each chat kind's settings object is called, and what its links look like (contract sections 9 and 10). */
const CHAT_KINDS = {
  [XMPP_KIND]: { field: 'xmpp', fields: '{service, domain, muc, jid, password_env, nick}', link: BARE_JID_PATTERN, linkIs: 'a bare JID (user@domain)', places: "the server's rooms" },
  [SLACK_KIND]: { field: 'slack', fields: '{app_token_env, bot_token_env, api_url}', link: SLACK_USER_PATTERN, linkIs: 'a Slack user id (U…)', places: "the workspace's channels" },
} as const;

/**
 * A chat channel (xmpp, slack) has its settings object and takes its linked users and places from the
 * platform; no other kind has either, and a channel has one kind's settings only.
 */
function chatChannelIssues(channel: Channel, at: string, user: (id: string, path: string) => unknown, problem: (path: string, message: string) => void): void {
  const kind = Object.hasOwn(CHAT_KINDS, channel.kind) ? CHAT_KINDS[channel.kind as keyof typeof CHAT_KINDS] : null;
  for (const other of Object.entries(CHAT_KINDS)) {
    if (other[1] !== kind && channel[other[1].field] !== undefined) problem(`${at}.${other[1].field}`, `is only for a channel of kind "${other[0]}"`);
  }
  if (kind === null) {
    if (channel.links !== undefined) problem(`${at}.links`, `is only for a chat channel (kind ${Object.keys(CHAT_KINDS).map((k) => `"${k}"`).join(' or ')})`);
    return;
  }
  if (channel[kind.field] === undefined) return problem(`${at}.${kind.field}`, `is required for a${kind.field === 'xmpp' ? 'n' : ''} ${channel.kind} channel: ${kind.fields}`);
  if (channel.linked_users.length > 0) problem(`${at}.linked_users`, `must be absent for a${kind.field === 'xmpp' ? 'n' : ''} ${channel.kind} channel: its linked users are the keys of links`);
  if (channel.addresses.length > 0) problem(`${at}.addresses`, `must be absent for a${kind.field === 'xmpp' ? 'n' : ''} ${channel.kind} channel: its places are ${kind.places}`);
  for (const [id, address] of Object.entries(channel.links ?? {})) {
    user(id, `${at}.links.${id}`);
    if (!kind.link.test(address)) problem(`${at}.links.${id}`, `must be ${kind.linkIs}`);
  }
}

/**
 * A channel's defaults name what the world has: a project of it, a route whose agent is one of the channel's
 * (and whose model is one of the agent's, when the world lists them), a posture and an effort of that agent
 * (the route's, else the channel's first), when the world lists them. Projects are read before channels.
 */
function defaultsIssues(
  channel: Channel,
  at: string,
  world: { readonly agents: Map<string, WorldFile['agents'][number]>; readonly projects: ReadonlySet<string> },
  problem: (path: string, message: string) => void,
): void {
  const defaults = channel.defaults!;
  if (defaults.project !== null && !world.projects.has(defaults.project)) problem(`${at}.project`, `names no project (${defaults.project})`);
  let agentId = channel.agents[0] ?? null;
  let model: string | null = null;
  if (defaults.route !== null) {
    const route = routeOf(defaults.route, channel.agents);
    if (route === null) return problem(`${at}.route`, `names no agent of the channel (${channel.agents.join(', ') || 'none'}): write agent or agent:model`);
    ({ agent: agentId, model } = route);
  }
  const agent = agentId === null ? undefined : world.agents.get(agentId);
  if (agent === undefined) {
    if (defaults.permission_mode !== null || defaults.effort !== null) problem(at, 'gives a posture or an effort, but the channel has no agent');
    return;
  }
  const outside = (list: readonly string[] | null, value: string | null) => value !== null && list !== null && !list.includes(value);
  if (outside(agent.models, model)) problem(`${at}.route`, `names ${model}, which is not a model of ${agent.id} (${agent.models!.join(', ') || 'none'})`);
  if (outside(agent.permission_modes, defaults.permission_mode)) {
    problem(`${at}.permission_mode`, `is not a permission mode of ${agent.id} (${agent.permission_modes!.join(', ') || 'none'})`);
  }
  if (outside(agent.efforts, defaults.effort)) problem(`${at}.effort`, `is not an effort of ${agent.id} (${agent.efforts!.join(', ') || 'none'})`);
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
