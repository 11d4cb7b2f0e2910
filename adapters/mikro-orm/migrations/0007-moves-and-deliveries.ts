import { Migration } from '@mikro-orm/migrations';

/**
 * Teleport moves the conversation: a conversation that left its thread records where it went
 * (`moved_to`, null while it is here). Deliveries to channels wait in an outbox (`deliveries`) until
 * their channel takes them: stored with the move, claimed by one instance at a time (`holder` until
 * `due_at`), retried with `attempts` counted, removed once taken.
 */
export class MovesAndDeliveries extends Migration {
  override up(): void {
    const statements = [
      `alter table "conversations" add column "moved_to" jsonb null`,
      `create table "deliveries" (
        "id" uuid not null primary key,
        "channel" text not null,
        "place" text not null,
        "new_thread" boolean not null,
        "address" jsonb not null,
        "title" text not null,
        "text" text not null,
        "attempts" int not null default 0,
        "due_at" timestamptz not null,
        "holder" text null)`,
      `create index "deliveries_due_at_index" on "deliveries" ("due_at")`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "deliveries"');
    this.addSql('alter table "conversations" drop column if exists "moved_to"');
  }
}
