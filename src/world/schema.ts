import { isAbsolute, resolve } from 'node:path';
import * as v from 'valibot';
import { ENV_NAME_PATTERN } from '../../domain/agent-env.ts';
import { PERMISSION_OPTION_KINDS, RUN_STATUSES } from '../../domain/model.ts';
import { isStorableText } from '../../domain/text.ts';
import { isBranchName, isRepositoryUrl, repositoryUrlRefusal } from '../../domain/worktree.ts';
import { UUID7_PATTERN } from '../../domain/vocabulary.ts';
import { BARE_JID_PATTERN, DOMAIN_PATTERN, XMPP_SERVICE_PATTERN } from '../../domain/xmpp.ts';
import { SLACK_API_URL_PATTERN } from '../../domain/slack.ts';
import { ROLES } from '../../domain/accounts.ts';

const name = v.pipe(v.string(), v.nonEmpty('must not be empty'), v.maxLength(200, 'must be at most 200 characters'));
const uuid7 = v.pipe(v.string(), v.regex(UUID7_PATTERN, 'must be a lower-case UUIDv7'));
const names = v.optional(v.array(name), []);
const nullable = <T extends v.GenericSchema>(schema: T) => v.optional(v.nullable(schema), null);

const envName = v.pipe(v.string(), v.regex(ENV_NAME_PATTERN, 'must be a variable name: a letter or _, then at most 199 letters, digits or _'));
const envValue = v.pipe(v.string(), v.check(isStorableText, 'must not contain the NUL character or a lone UTF-16 surrogate'));

const Option = v.object({
  id: name,
  name: v.string(),
  kind: nullable(v.picklist(PERMISSION_OPTION_KINDS, `must be one of ${PERMISSION_OPTION_KINDS.join(', ')}`)),
});
/** A tool call as ACP describes it (`id` for `toolCallId`); its other fields are kept as given. */
const ToolCall = v.looseObject({ id: v.string() });

const absolutePath = v.pipe(
  v.string(),
  v.check(isStorableText, 'must not contain the NUL character or a lone UTF-16 surrogate'),
  v.check((path) => isAbsolute(path), 'must be an absolute path'),
  v.maxLength(4096, 'must be at most 4096 characters'),
  v.transform((path) => resolve(path)),
);

/** A project's repository: the absolute path of one on this machine, or a git URL (each instance keeps a clone of its own). */
const repository = v.pipe(
  v.string(),
  v.check(isStorableText, 'must not contain the NUL character or a lone UTF-16 surrogate'),
  v.rawCheck(({ dataset, addIssue }) => {
    if (!dataset.typed) return;
    const repo = dataset.value;
    const refusal = isRepositoryUrl(repo) ? repositoryUrlRefusal(repo)
      : !isAbsolute(repo) ? 'must be an absolute path or a git URL (file:///…, ssh://, https://, or user@host:path)'
      : repo.length > 4096 ? 'must be at most 4096 characters' : null;
    if (refusal !== null) addIssue({ message: refusal });
  }),
  v.transform((repo) => (isRepositoryUrl(repo) ? repo : resolve(repo))),
);

/**
 * A project: its name alone (its directory is `DATA_DIR/projects/<name>`), a name and the absolute
 * path of a directory on disk, where its runs work, or a name, the absolute path of a git
 * repository and the branch each thread's worktree starts from (contract section 8).
 */
const Project = v.union(
  [
    name,
    v.pipe(
      v.strictObject({
        name,
        directory: nullable(absolutePath),
        repo: nullable(repository),
        base: nullable(v.pipe(v.string(), v.check(isBranchName, 'must be a branch name (letters, digits, ".", "_", "-" and "/", not starting with "-" or ".")'))),
      }),
      v.forward(v.check((p) => p.repo === null || p.directory === null, 'must not be given with repo: a repository project works in worktrees'), ['directory']),
      v.forward(v.check((p) => p.repo === null || p.base !== null, 'must name the branch worktrees start from'), ['base']),
      v.forward(v.check((p) => p.repo !== null || p.base === null, 'needs repo'), ['base']),
      v.description('A directory project {"name", "directory"} or a repository project {"name", "repo", "base"}: base is given with repo and only with it, directory never with repo.'),
    ),
  ],
  'must be a project name or an object {"name", "directory"} or {"name", "repo", "base"}',
);

type PlaceInput = {
  id: string;
  name: string;
  shared?: boolean;
  inside?: string | null;
  barred?: string | null;
  children?: PlaceInput[];
};
type PlaceOutput = {
  id: string;
  name: string;
  shared: boolean;
  inside: string | null;
  barred: string | null;
  children: PlaceOutput[];
};
/** A place of a channel (a room, a thread inside it), with the places inside it. */
export const Place: v.GenericSchema<PlaceInput, PlaceOutput> = v.object({
  id: name,
  name: v.string(),
  shared: v.optional(v.boolean(), false),
  inside: nullable(name),
  barred: nullable(v.string()),
  children: v.optional(v.array(v.lazy(() => Place)), []),
});

/** A bare JID (`local@domain`, no resource), as a chat address or a bot account. */
const bareJid = v.pipe(
  v.string('must be a bare JID (user@domain)'),
  v.maxLength(1023, 'must be at most 1023 characters'),
  v.regex(BARE_JID_PATTERN, 'must be a bare JID (user@domain), without a resource'),
);
const domainName = v.pipe(v.string('must be a domain name'), v.regex(DOMAIN_PATTERN, 'must be a domain name (letters, digits, dots and hyphens)'));

/** The `xmpp` object of an xmpp channel: the server, the bot's account and nick; its password stays in the environment. */
const XmppAccount = v.strictObject(
  {
    service: v.pipe(v.string(), v.regex(XMPP_SERVICE_PATTERN, 'must be xmpp://host:port or xmpps://host:port')),
    domain: domainName,
    muc: domainName,
    jid: bareJid,
    password_env: envName,
    nick: v.pipe(v.string(), v.nonEmpty('must not be empty'), v.maxLength(100, 'must be at most 100 characters'), v.regex(/^[^\s/@]+$/, 'must not contain spaces, / or @')),
  },
  (issue) => (issue.expected === 'never' ? `is not a field of xmpp (${String(issue.input)}); the password is never in the world: name its variable in password_env` : 'must be an object {service, domain, muc, jid, password_env, nick}'),
);

/** The `slack` object of a slack channel: the variables holding its two tokens, and the Web API's URL; never a token. */
const SlackSettings = v.strictObject(
  {
    app_token_env: envName,
    bot_token_env: envName,
    api_url: v.optional(v.nullable(v.pipe(v.string(), v.regex(SLACK_API_URL_PATTERN, 'must be an http or https URL ending with /'))), null),
  },
  (issue) => (issue.expected === 'never' ? `is not a field of slack (${String(issue.input)}); tokens are never in the world: name their variables in app_token_env and bot_token_env` : 'must be an object {app_token_env, bot_token_env, api_url}'),
);

const ModelMessage = v.object({ id: uuid7, role: name, content: v.string() });
const Run = v.object({
  id: uuid7,
  directory: nullable(v.string()),
  status: v.optional(v.picklist(RUN_STATUSES, `must be one of ${RUN_STATUSES.join(', ')}`), 'succeeded'),
  error: nullable(v.string()),
  ended_at: nullable(v.pipe(v.string(), v.isoTimestamp('must be an ISO timestamp'))),
  model_messages: v.optional(v.array(ModelMessage), []),
});
const Pending = v.object({
  id: uuid7,
  kind: v.picklist(['approval', 'question'], 'must be approval or question'),
  run_id: nullable(uuid7),
  title: v.string(),
  options: v.optional(v.array(Option), []),
  tool_call: nullable(ToolCall),
});
const Conversation = v.object({
  id: uuid7,
  agent: name,
  model: nullable(name),
  permission_mode: nullable(name),
  effort: nullable(name),
  address: nullable(v.object({ channel: name, id: name })),
  turn_running: v.optional(v.boolean(), false),
  pending: v.optional(v.array(Pending), []),
  runs: v.optional(v.array(Run), []),
});
const Message = v.object({ id: uuid7, role: name, text: v.string(), artifact_id: nullable(uuid7) });
const Thread = v.object({
  id: uuid7,
  key: nullable(name),
  channel: name,
  owner: name,
  members: names,
  project: nullable(name),
  title: v.optional(v.string(), ''),
  fork_of: nullable(uuid7),
  fork_cutoff: nullable(uuid7),
  messages: v.optional(v.array(Message), []),
  conversations: v.optional(v.array(Conversation), []),
});

/**
 * A channel's `defaults`: the project, route, posture and effort of a thread a chat message starts there
 * (checked against the world in references.ts). Each field absent: none (the channel's first agent, its first
 * model and default posture, as the console's composer starts a thread).
 */
const ChannelDefaults = v.pipe(
  // Strict: a misspelt field is refused, not silently a default left out.
  v.strictObject({
    project: v.pipe(nullable(name), v.description('A project of the world: the thread works in it.')),
    route: v.pipe(
      nullable(v.pipe(name, v.regex(/^[^:\s]+(:[^\s]+)?$/, 'must be agent or agent:model'))),
      v.description("The thread's agent and model, agent:model (or agent alone); the agent is one of the channel's agents."),
    ),
    permission_mode: v.pipe(nullable(name), v.description("The conversation's posture: one of the agent's permission_modes.")),
    effort: v.pipe(nullable(name), v.description("The conversation's effort: one of the agent's efforts.")),
  }, 'must be an object with project, route, permission_mode and effort only (each optional)'),
  v.description('What a thread started by a chat message on this channel gets (an XMPP message addressing the bot, a Slack app_mention); a field left out: the console\'s own default.'),
);

/** The world file (contract section 6), as written: tokens in clear, defaults filled in. */
export const WorldFileSchema = v.object({
  // The JSON Schema an editor completes the file with (docs/world.schema.json); the loader ignores it.
  $schema: v.optional(v.string()),
  users: v.array(v.object({
    id: name, name: v.string(), token: v.pipe(v.string(), v.minLength(8, 'must be at least 8 characters')),
    role: v.optional(v.picklist(ROLES, 'must be admin or member'), 'member'),
  })),
  projects: v.optional(v.array(Project), []),
  agents: v.array(
    v.object({
      id: name,
      // Absent (null): whatever the agent advertises; a list narrows that, never widens it.
      models: nullable(v.array(name)),
      efforts: nullable(v.array(name)),
      permission_modes: nullable(v.array(name)),
      // Absent (null): the mode a new session of the agent starts in.
      default_permission_mode: nullable(name),
      command: nullable(v.pipe(v.array(v.string()), v.minLength(1, 'must name a program'))),
      env: v.optional(v.record(envName, envValue), {}),
      env_pass: v.optional(v.array(envName), []),
      // Model APIs are on the network: an agent has the host's unless the world takes it away.
      network: v.optional(v.picklist(['host', 'none'], 'must be host or none'), 'host'),
    }),
  ),
  channels: v.array(
    v.object({
      id: name,
      kind: name,
      name: v.string(),
      shared: v.optional(v.boolean(), false),
      browsable: v.optional(v.boolean(), false),
      agents: names,
      linked_users: names,
      addresses: v.optional(v.array(Place), []),
      // An xmpp channel (contract section 9): its server and bot account, and the console users linked to chat addresses.
      xmpp: v.optional(XmppAccount),
      // A slack channel (contract section 10): the variables of its tokens, and the console users linked to Slack user ids.
      slack: v.optional(SlackSettings),
      // Chat addresses by console user: bare JIDs on an xmpp channel, user ids on a slack one (checked by kind).
      links: v.optional(v.record(name, v.pipe(v.string(), v.maxLength(1023, 'must be at most 1023 characters')))),
      defaults: v.optional(v.nullable(ChannelDefaults)),
    }),
  ),
  installations: v.optional(
    v.array(
      v.object({
        id: uuid7,
        owner: name,
        provider_name: v.string(),
        server_url: v.pipe(v.string(), v.regex(/^https?:\/\/\S+$/, 'must be an http or https URL')),
        headers: v.optional(v.record(v.string(), v.string()), {}),
        enabled: v.optional(v.boolean(), true),
        authorized: v.optional(v.boolean(), true),
      }),
    ),
    [],
  ),
  artifacts: v.optional(
    v.array(
      v.object({
        id: uuid7,
        owner: name,
        installation: uuid7,
        resource_uri: v.pipe(v.string(), v.startsWith('ui://', 'must be a ui:// resource')),
        title: v.string(),
        tool: name,
        input: v.optional(v.unknown(), {}),
        output: v.optional(v.unknown(), { content: [] }),
      }),
    ),
    [],
  ),
  threads: v.optional(v.array(Thread), []),
});

export type WorldFile = v.InferOutput<typeof WorldFileSchema>;
