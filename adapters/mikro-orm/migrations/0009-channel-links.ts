import { Migration } from '@mikro-orm/migrations';

/**
 * Linking console users to chat addresses (contract section 9): the links, and the one-use codes that
 * make them (only each code's SHA-256 is stored).
 */
export class ChannelLinks extends Migration {
  override up(): void {
    const statements = [
      `create table "channel_link_codes" (
        "code_hash" text not null primary key,
        "user_id" text not null,
        "channel" text not null,
        "expires_at" timestamptz not null,
        "created_at" timestamptz not null,
        "used_at" timestamptz null)`,
      `create index "channel_link_codes_user_id_channel_index" on "channel_link_codes" ("user_id", "channel")`,
      `create table "channel_links" (
        "user_id" text not null,
        "channel" text not null,
        "address" text not null,
        "created_at" timestamptz not null,
        constraint "channel_links_pkey" primary key ("user_id", "channel"))`,
      `alter table "channel_links" add constraint "channel_links_channel_address_unique" unique ("channel", "address")`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "channel_links"');
    this.addSql('drop table if exists "channel_link_codes"');
  }
}
