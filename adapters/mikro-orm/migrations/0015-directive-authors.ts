import { Migration } from '@mikro-orm/migrations';

/**
 * Who sent each directive remembered by its `message_id` (`directives.author`): a `message_id` is its
 * author's alone on a thread, so another user's reuse of it is refused instead of being answered with
 * the first author's answer (their text dropped). Rows from before have none, and are matched as
 * before, whoever retries them.
 */
export class DirectiveAuthors extends Migration {
  override up(): void {
    this.addSql('alter table "directives" add column "author" text null');
  }

  override down(): void {
    this.addSql('alter table "directives" drop column if exists "author"');
  }
}
