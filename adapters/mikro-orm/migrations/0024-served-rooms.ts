import { Migration } from '@mikro-orm/migrations';

/**
 * The places (XMPP rooms) a chat channel's bot was invited to by a linked user and serves: joined again
 * after a restart. At most a hundred per channel (ports/chat-inbox.ts, `SERVED_PLACES_MAX`).
 */
export class ServedRooms extends Migration {
  override up(): void {
    this.addSql(`create table "chat_served_places" (
      "channel" text not null,
      "place" text not null,
      "served_at" timestamptz not null,
      constraint "chat_served_places_pkey" primary key ("channel", "place"))`);
  }

  override down(): void {
    this.addSql('drop table if exists "chat_served_places"');
  }
}
