import { Migration } from '@mikro-orm/migrations';

/**
 * Exactly once across a crash between "turn ended" and "next one started" (contract section 7): the
 * hand-over that starts a queued directive's run also writes its prompt here, and the turn deletes
 * the row just before the prompt goes to the agent. A lapsed turn whose run still has its row was
 * never given to the agent: the sweep starts it again rather than failing it. A row never outlives its thread.
 */
export class UnsentPrompts extends Migration {
  override up(): void {
    const statements = [
      `create table "unsent_prompts" ("run_id" uuid not null, "thread_id" uuid not null, "started" jsonb not null,
        constraint "unsent_prompts_pkey" primary key ("run_id"))`,
      `alter table "unsent_prompts" add constraint "unsent_prompts_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on update cascade`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "unsent_prompts"');
  }
}
