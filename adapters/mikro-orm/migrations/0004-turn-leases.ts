import { Migration } from '@mikro-orm/migrations';

/**
 * Turns are leases: a claimed turn records its run, its holder (an instance id) and when its lease
 * lapses; any instance sweeps lapsed ones. A turn left running by an earlier version has no lease
 * (null), which the sweep takes as lapsed. Answers to pending items are kept until their run ends,
 * so an answer whose bus signal was lost is still found.
 */
export class TurnLeases extends Migration {
  override up(): void {
    const statements = [
      `alter table "conversations" add column "turn_run_id" uuid null, add column "turn_holder" text null,
        add column "turn_expires_at" timestamptz null`,
      `create index "conversations_turn_expires_at_index" on "conversations" ("turn_expires_at")`,
      `create table "pending_answers" ("pending_id" uuid not null, "run_id" uuid not null, "answer" jsonb not null,
        constraint "pending_answers_pkey" primary key ("pending_id"))`,
      `create index "pending_answers_run_id_index" on "pending_answers" ("run_id")`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "pending_answers"');
    this.addSql('drop index if exists "conversations_turn_expires_at_index"');
    this.addSql('alter table "conversations" drop column if exists "turn_run_id", drop column if exists "turn_holder", drop column if exists "turn_expires_at"');
  }
}
