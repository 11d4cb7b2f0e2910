import { Migration } from '@mikro-orm/migrations';

/**
 * Who a chat platform asserted each occupant id of a place to be (an XMPP room's XEP-0421 id, from its
 * presence): a message read back from the archive names its sender by that id, never by what it claims
 * of itself. An empty `sender` marks an id seen for two senders: it names nobody.
 */
export class ChatOccupants extends Migration {
  override up(): void {
    this.addSql(`create table "chat_occupants" (
      "channel" text not null,
      "place" text not null,
      "occupant" text not null,
      "sender" text not null,
      "updated_at" timestamptz not null,
      constraint "chat_occupants_pkey" primary key ("channel", "place", "occupant"))`);
  }

  override down(): void {
    this.addSql('drop table if exists "chat_occupants"');
  }
}
