import { Migration } from '@mikro-orm/migrations';

/**
 * Directives, live events and agent sessions. SQL that PostgreSQL 15 accepts, with the names
 * MikroORM's schema generator gives (the schema-diff test checks they agree with the mapping).
 * `events` is keyed (thread_id, seq): the key refuses a doubled seq, which is what makes
 * concurrent appends from several instances safe, and serves replay as one range scan.
 */
export class DirectivesAndEvents extends Migration {
  override up(): void {
    const statements = [
      `alter table "conversations" add column "session_id" text null`,
      `create table "directives" ("thread_id" uuid not null, "message_id" text not null, "answer" jsonb not null,
        constraint "directives_pkey" primary key ("thread_id", "message_id"))`,
      `create table "events" ("thread_id" uuid not null, "seq" int not null, "type" text not null,
        "at" timestamptz not null, "data" jsonb not null, constraint "events_pkey" primary key ("thread_id", "seq"))`,
      // Containment, as in the first schema: neither outlives its thread.
      `alter table "directives" add constraint "directives_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on update cascade`,
      `alter table "events" add constraint "events_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on update cascade`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "events"');
    this.addSql('drop table if exists "directives"');
    this.addSql('alter table "conversations" drop column if exists "session_id"');
  }
}
