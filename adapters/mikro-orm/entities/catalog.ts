import type { ChannelDefaults } from '../../../domain/model.ts';
import { core } from '../packages.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

// Property names are the column names (snake_case), so raw SQL and the mapping read alike.

/**
 * `users`: a person (an account, migration 0017-accounts). Only the SHA-256 of a world-file user's token is
 * stored (`token_hash`; null for one who signs in by OpenID Connect, found by `issuer` and `subject`).
 * A world import writes the name, token and role, never `active` nor `created_at`: an admin's
 * deactivation outlives a restart.
 */
export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.text().primary(),
    name: p.text(),
    token_hash: p.text().nullable().unique(),
    email: p.text().nullable(),
    role: p.enum(['admin', 'member']).default('member'),
    active: p.boolean().default(true),
    issuer: p.text().nullable(),
    subject: p.text().nullable(),
    created_at: p.datetime().defaultRaw('now()'),
  },
  uniques: [
    {
      name: 'users_issuer_subject_unique',
      expression: 'create unique index "users_issuer_subject_unique" on "users" ("issuer", "subject") where "issuer" is not null',
    },
  ],
});

/**
 * `projects`: the project vocabulary; `directory` is a project's directory on disk (null: under
 * `DATA_DIR`); a repository project names its git repository (`repo`) and base branch (`base`).
 */
export const ProjectSchema = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    name: p.text().primary(),
    directory: p.text().nullable(),
    repo: p.text().nullable(),
    base: p.text().nullable(),
  },
});

/**
 * `agents`: an agent and the lists that narrow what it advertises (null: no narrowing; a null
 * default mode is the one its sessions start in); `command` is null for the bundled demo agent.
 */
export const AgentSchema = defineEntity({
  name: 'Agent',
  tableName: 'agents',
  properties: {
    id: p.text().primary(),
    models: p.array().nullable(),
    efforts: p.array().nullable(),
    permission_modes: p.array().nullable(),
    default_permission_mode: p.text().nullable(),
    command: p.json<string[]>().nullable(),
    /** Literal variables of the agent's environment; `env_pass` holds names only, never values. */
    env: p.json<Record<string, string>>(),
    env_pass: p.array(),
    /** A sandboxed agent's network: `host` or `none` (migration 0014-agent-network). */
    network: p.text(),
  },
});

/** `channels`: a connected channel; its address tree is one JSON document, read whole. */
export const ChannelSchema = defineEntity({
  name: 'Channel',
  tableName: 'channels',
  properties: {
    id: p.text().primary(),
    kind: p.text(),
    name: p.text(),
    shared: p.boolean(),
    browsable: p.boolean(),
    agents: p.array(),
    linked_users: p.array(),
    addresses: p.json<unknown[]>(),
    /** What a thread a chat message starts here gets (migration 0020-channel-defaults); null: none. */
    defaults: p.json<ChannelDefaults>().nullable(),
  },
});

/** `installations`: a provider MCP server; `headers` are credentials and no read answers them. */
export const InstallationSchema = defineEntity({
  name: 'Installation',
  tableName: 'installations',
  properties: {
    id: p.uuid().primary(),
    owner: p.text(),
    provider_name: p.text(),
    server_url: p.text(),
    headers: p.json<Record<string, string>>(),
    enabled: p.boolean(),
    authorized: p.boolean(),
  },
});

/**
 * `artifacts`: a saved MCP app invocation. `installation` is a plain id, not a foreign key: a world
 * may name another user's installation, and the read rules, not the schema, decide what is shown.
 */
export const ArtifactSchema = defineEntity({
  name: 'Artifact',
  tableName: 'artifacts',
  properties: {
    id: p.uuid().primary(),
    owner: p.text(),
    installation: p.uuid(),
    resource_uri: p.text(),
    title: p.text(),
    tool: p.text(),
    // Nullable: MikroORM writes a JSON null as SQL NULL, which reads back as null all the same.
    input: p.json<unknown>().nullable(),
    output: p.json<unknown>().nullable(),
    created_at: p.datetime(),
  },
});
