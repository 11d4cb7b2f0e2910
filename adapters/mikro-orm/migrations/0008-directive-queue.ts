import { Migration } from '@mikro-orm/migrations';

/**
 * Follow-ups while a turn runs (contract section 7): directives queued on a busy thread are rows, so
 * they survive restarts and any instance (or the sweep) can start the next one. Neither outlives its
 * thread or conversation.
 */
export class DirectiveQueue extends Migration {
  override up(): void {
    const statements = [
      `create table "directive_queue" (
        "id" uuid not null primary key,
        "thread_id" uuid not null,
        "conversation_id" uuid not null,
        "message_id" uuid not null,
        "text" text not null,
        "author" text not null,
        "ordinal" int not null,
        "directory" text null,
        "permission_mode" text null,
        "created_at" timestamptz not null)`,
      `create index "directive_queue_thread_id_ordinal_index" on "directive_queue" ("thread_id", "ordinal")`,
      `alter table "directive_queue" add constraint "directive_queue_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on update cascade`,
      `alter table "directive_queue" add constraint "directive_queue_conversation_id_foreign" foreign key ("conversation_id") references "conversations" ("id") on update cascade`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "directive_queue"');
  }
}
