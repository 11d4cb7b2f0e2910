import { Migration } from '@mikro-orm/migrations';

/**
 * Rewinding a thread (contract section 11): a run remembers the ledger message that started it
 * (`runs.message_id`, null for runs from before and for a turn no message started), and runs and
 * messages a rewind took back read `rewound` (kept, never deleted). `thread_rewinds` is the journal of a
 * rewind whose files are not yet restored: written in the transaction that marks the runs, removed once
 * the worktree holds the checkpoint, so a crash in between is finished by the thread's next turn or read.
 */
export class Rewinds extends Migration {
  override up(): void {
    const statements = [
      'alter table "runs" add column "message_id" uuid null, add column "rewound" boolean not null default false',
      'alter table "messages" add column "rewound" boolean not null default false',
      `create table "thread_rewinds" (
        "thread_id" uuid not null primary key,
        "run_id" uuid not null,
        "commit" text not null,
        "created_at" timestamptz not null)`,
      'alter table "thread_rewinds" add constraint "thread_rewinds_thread_id_foreign" foreign key ("thread_id") references "threads" ("id") on update cascade on delete cascade',
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop table if exists "thread_rewinds"');
    this.addSql('alter table "messages" drop column if exists "rewound"');
    this.addSql('alter table "runs" drop column if exists "message_id", drop column if exists "rewound"');
  }
}
