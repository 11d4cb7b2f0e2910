import { Migration } from '@mikro-orm/migrations';

/**
 * The first schema. Written by hand in SQL that PostgreSQL 15 accepts (PGlite is 18, production may
 * be 15), with the names MikroORM's schema generator gives, so the mapping and the tables agree
 * (test/adapters/mikro-orm-queries.test.ts checks that the generator sees no difference).
 * The (x, id) indexes make every keyset page a backward index range scan.
 */
export class InitialSchema extends Migration {
  override up(): void {
    const statements = [
      `create table "users" ("id" text not null, "name" text not null, "token_hash" text not null,
        constraint "users_pkey" primary key ("id"))`,
      `alter table "users" add constraint "users_token_hash_unique" unique ("token_hash")`,
      `create table "projects" ("name" text not null, constraint "projects_pkey" primary key ("name"))`,
      `create table "agents" ("id" text not null, "models" text[] not null, "efforts" text[] not null,
        "permission_modes" text[] not null, "default_permission_mode" text not null, "command" jsonb null,
        constraint "agents_pkey" primary key ("id"))`,
      `create table "channels" ("id" text not null, "kind" text not null, "name" text not null,
        "shared" boolean not null, "browsable" boolean not null, "agents" text[] not null,
        "linked_users" text[] not null, "addresses" jsonb not null, constraint "channels_pkey" primary key ("id"))`,
      `create table "installations" ("id" uuid not null, "owner" text not null, "provider_name" text not null,
        "server_url" text not null, "headers" jsonb not null, "enabled" boolean not null, "authorized" boolean not null,
        constraint "installations_pkey" primary key ("id"))`,
      `create table "artifacts" ("id" uuid not null, "owner" text not null, "installation" uuid not null,
        "resource_uri" text not null, "title" text not null, "tool" text not null, "input" jsonb null,
        "output" jsonb null, "created_at" timestamptz not null, constraint "artifacts_pkey" primary key ("id"))`,
      `create table "threads" ("id" uuid not null, "key" text null, "channel" text not null, "owner" text not null,
        "project" text null, "title" text not null, "fork_of" uuid null, "fork_cutoff" uuid null,
        "created_at" timestamptz not null, constraint "threads_pkey" primary key ("id"))`,
      `create index "threads_owner_id_index" on "threads" ("owner", "id")`,
      `create unique index "threads_owner_key_unique" on "threads" ("owner", "key") where "key" is not null`,
      `create table "thread_members" ("thread_id" uuid not null, "user_id" text not null,
        constraint "thread_members_pkey" primary key ("thread_id", "user_id"))`,
      `create index "thread_members_user_id_thread_id_index" on "thread_members" ("user_id", "thread_id")`,
      `create table "messages" ("id" uuid not null, "thread_id" uuid not null, "role" text not null, "text" text not null,
        "artifact_id" uuid null, "created_at" timestamptz not null, constraint "messages_pkey" primary key ("id"))`,
      `create index "messages_thread_id_id_index" on "messages" ("thread_id", "id")`,
      `create table "conversations" ("id" uuid not null, "thread_id" uuid not null, "agent" text not null,
        "model" text null, "permission_mode" text null, "effort" text null, "address" jsonb null,
        "turn_running" boolean not null, "created_at" timestamptz not null, constraint "conversations_pkey" primary key ("id"))`,
      `create index "conversations_thread_id_id_index" on "conversations" ("thread_id", "id")`,
      `create table "runs" ("id" uuid not null, "conversation_id" uuid not null, "directory" text null,
        "status" text check ("status" in ('running', 'succeeded', 'failed', 'cancelled')) not null, "error" text null,
        "started_at" timestamptz not null, "ended_at" timestamptz null, constraint "runs_pkey" primary key ("id"))`,
      `create index "runs_conversation_id_id_index" on "runs" ("conversation_id", "id")`,
      `create table "model_messages" ("id" uuid not null, "run_id" uuid not null, "role" text not null,
        "content" text not null, "created_at" timestamptz not null, constraint "model_messages_pkey" primary key ("id"))`,
      `create index "model_messages_run_id_id_index" on "model_messages" ("run_id", "id")`,
      `create table "pending" ("id" uuid not null, "kind" text check ("kind" in ('approval', 'question')) not null,
        "conversation_id" uuid not null, "run_id" uuid null, "title" text not null, "options" jsonb not null,
        constraint "pending_pkey" primary key ("id"))`,
      `create index "pending_conversation_id_index" on "pending" ("conversation_id")`,
      // Containment only: a row cannot outlive the thread, conversation or run it lives under.
      foreignKey('thread_members', 'thread_id', 'threads'),
      foreignKey('messages', 'thread_id', 'threads'),
      foreignKey('conversations', 'thread_id', 'threads'),
      foreignKey('runs', 'conversation_id', 'conversations'),
      foreignKey('model_messages', 'run_id', 'runs'),
      foreignKey('pending', 'conversation_id', 'conversations'),
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    const tables = ['pending', 'model_messages', 'runs', 'conversations', 'messages', 'thread_members', 'threads',
      'artifacts', 'installations', 'channels', 'agents', 'projects', 'users'];
    for (const table of tables) this.addSql(`drop table if exists "${table}"`);
  }
}

/** A foreign key named as MikroORM names it (`<table>_<column>_foreign`). */
const foreignKey = (table: string, column: string, target: string): string =>
  `alter table "${table}" add constraint "${table}_${column}_foreign" foreign key ("${column}") references "${target}" ("id") on update cascade`;
