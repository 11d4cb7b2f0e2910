import { Migration } from '@mikro-orm/migrations';

/**
 * Schedules (contract section 12): `schedules` holds each schedule and its next due time (moved by a
 * compare-and-swap as a due time is claimed); `schedule_fires` holds each claimed due time until its directive
 * is sent (its key, schedule and due time, is what makes a fire sent twice run once).
 */
export class Schedules extends Migration {
  override up(): void {
    const statements = [
      `create table "schedules" (
        "id" uuid not null,
        "owner" text not null,
        "cron" text not null,
        "timezone" text not null,
        "text" text not null,
        "thread_id" uuid null,
        "project" text null,
        "model" text null,
        "enabled" boolean not null,
        "next_run_at" timestamptz null,
        "created_at" timestamptz not null,
        constraint "schedules_pkey" primary key ("id"))`,
      `create index "schedules_owner_index" on "schedules" ("owner")`,
      `create index "schedules_next_run_at_index" on "schedules" ("next_run_at")`,
      `create table "schedule_fires" (
        "schedule_id" uuid not null,
        "due_at" timestamptz not null,
        "owner" text not null,
        "text" text not null,
        "thread_id" uuid null,
        "project" text null,
        "model" text null,
        "claimed_at" timestamptz not null,
        constraint "schedule_fires_pkey" primary key ("schedule_id", "due_at"))`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "schedule_fires"');
    this.addSql('drop table if exists "schedules"');
  }
}
