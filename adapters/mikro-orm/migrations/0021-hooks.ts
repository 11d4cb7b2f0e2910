import { Migration } from '@mikro-orm/migrations';

/**
 * Hooks in (contract section 12): `hooks` holds each hook with the SHA-256 of its secret (never the
 * secret); `hook_keys` holds the call id each idempotency key names for 24 hours (see ports/hook-store.ts).
 */
export class Hooks extends Migration {
  override up(): void {
    const statements = [
      `create table "hooks" (
        "id" uuid not null,
        "owner" text not null,
        "thread_id" uuid null,
        "project" text null,
        "model" text null,
        "secret_hash" text not null,
        "created_at" timestamptz not null,
        constraint "hooks_pkey" primary key ("id"))`,
      `create index "hooks_owner_index" on "hooks" ("owner")`,
      `create table "hook_keys" (
        "hook_id" uuid not null,
        "key" text not null,
        "call_id" uuid not null,
        "created_at" timestamptz not null,
        constraint "hook_keys_pkey" primary key ("hook_id", "key"))`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "hook_keys"');
    this.addSql('drop table if exists "hooks"');
  }
}
