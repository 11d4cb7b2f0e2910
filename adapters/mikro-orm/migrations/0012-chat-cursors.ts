import { Migration } from '@mikro-orm/migrations';

/**
 * What chat adapters keep so nothing people post is lost or handled twice (contract section 9): each
 * place's last message read (`chat_cursors`), and each message's claim by one instance, done once
 * handled (`chat_claims`).
 */
export class ChatCursors extends Migration {
  override up(): void {
    const statements = [
      `create table "chat_cursors" (
        "channel" text not null,
        "place" text not null,
        "stanza_id" text not null,
        "at" timestamptz not null,
        "updated_at" timestamptz not null,
        constraint "chat_cursors_pkey" primary key ("channel", "place"))`,
      `create table "chat_claims" (
        "channel" text not null,
        "key" text not null,
        "holder" text not null,
        "claimed_until" timestamptz not null,
        "done" boolean not null,
        "created_at" timestamptz not null,
        constraint "chat_claims_pkey" primary key ("channel", "key"))`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "chat_claims"');
    this.addSql('drop table if exists "chat_cursors"');
  }
}
