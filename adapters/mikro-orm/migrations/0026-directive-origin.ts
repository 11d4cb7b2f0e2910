import { Migration } from '@mikro-orm/migrations';

/**
 * Where a directive came from when no person typed it (contract section 12): its ledger message's `origin`
 * (`{"kind": "schedule" | "hook", "id"}`), and the queued item's while it waits, carried onto the message when it
 * runs. Null for a person's directive and for every other message; rows from before have none.
 */
export class DirectiveOrigin extends Migration {
  override up(): void {
    this.addSql('alter table "messages" add column "origin" jsonb null');
    this.addSql('alter table "directive_queue" add column "origin" jsonb null');
  }

  override down(): void {
    this.addSql('alter table "directive_queue" drop column if exists "origin"');
    this.addSql('alter table "messages" drop column if exists "origin"');
  }
}
