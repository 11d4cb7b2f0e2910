import { Migration } from '@mikro-orm/migrations';

/**
 * Threads people can manage (contract section 4, "Managing threads"): `threads.archived`, and the GIN indexes
 * the thread list's search probes, one on the titles and one on the ledger's text. Both index the expression
 * the search writes, `to_tsvector('simple', ...)` (the `simple` configuration: lower case, no stemming, no stop
 * words), so a query must keep that exact expression to use them.
 */
export class ThreadManagement extends Migration {
  override up(): void {
    const statements = [
      `alter table "threads" add column "archived" boolean not null default false`,
      `create index "threads_title_search_index" on "threads" using gin (to_tsvector('simple', "title"))`,
      `create index "messages_text_search_index" on "messages" using gin (to_tsvector('simple', "text"))`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop index if exists "messages_text_search_index"');
    this.addSql('drop index if exists "threads_title_search_index"');
    this.addSql('alter table "threads" drop column if exists "archived"');
  }
}
