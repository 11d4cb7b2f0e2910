import { Migration } from '@mikro-orm/migrations';

/**
 * Accounts (CONTRACT section 13): a user gains an email, a role, whether they are active, and the OpenID
 * Connect identity they sign in with (`issuer`, `subject`; null for a world-file user, whose `token_hash`
 * is now the one that may be null). The defaults give the rows from before a member's role, active, and
 * now as their creation. Server-side sessions and personal access tokens are stored by their SHA-256 and
 * go with their user; sign-ins under way and invitations have their own tables. Written with the names
 * MikroORM's schema generator gives (the schema-diff test in test/adapters/mikro-orm-queries.test.ts).
 */
export class Accounts extends Migration {
  override up(): void {
    const statements = [
      `alter table "users"
        add column "email" text null,
        add column "role" text check ("role" in ('admin', 'member')) not null default 'member',
        add column "active" boolean not null default true,
        add column "issuer" text null,
        add column "subject" text null,
        add column "created_at" timestamptz not null default now()`,
      `alter table "users" alter column "token_hash" drop not null`,
      `create unique index "users_issuer_subject_unique" on "users" ("issuer", "subject") where "issuer" is not null`,
      `create table "sessions" (
        "hash" text not null,
        "user_id" text not null,
        "created_at" timestamptz not null,
        "expires_at" timestamptz not null,
        constraint "sessions_pkey" primary key ("hash"))`,
      `create index "sessions_user_id_index" on "sessions" ("user_id")`,
      `alter table "sessions" add constraint "sessions_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade`,
      `create table "access_tokens" (
        "id" uuid not null,
        "user_id" text not null,
        "name" text not null,
        "hash" text not null,
        "created_at" timestamptz not null,
        "expires_at" timestamptz null,
        "last_used_at" timestamptz null,
        constraint "access_tokens_pkey" primary key ("id"))`,
      `alter table "access_tokens" add constraint "access_tokens_hash_unique" unique ("hash")`,
      `create index "access_tokens_user_id_index" on "access_tokens" ("user_id")`,
      `alter table "access_tokens" add constraint "access_tokens_user_id_foreign" foreign key ("user_id") references "users" ("id") on update cascade on delete cascade`,
      `create table "sign_in_flows" (
        "hash" text not null,
        "state" text not null,
        "nonce" text not null,
        "code_verifier" text not null,
        "redirect_uri" text not null,
        "expires_at" timestamptz not null,
        constraint "sign_in_flows_pkey" primary key ("hash"))`,
      `create index "sign_in_flows_expires_at_index" on "sign_in_flows" ("expires_at")`,
      `create table "invites" (
        "email" text not null,
        "invited_by" text not null,
        "created_at" timestamptz not null,
        constraint "invites_pkey" primary key ("email"))`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    for (const table of ['invites', 'sign_in_flows', 'access_tokens', 'sessions']) this.addSql(`drop table if exists "${table}"`);
    this.addSql('drop index if exists "users_issuer_subject_unique"');
    // Users without a world token (signed in by OpenID Connect) cannot be kept by a schema that requires one.
    this.addSql('delete from "users" where "token_hash" is null');
    this.addSql('alter table "users" alter column "token_hash" set not null');
    this.addSql(`alter table "users" drop column if exists "email", drop column if exists "role", drop column if exists "active",
      drop column if exists "issuer", drop column if exists "subject", drop column if exists "created_at"`);
  }
}
