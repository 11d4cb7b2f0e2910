import { Migration } from '@mikro-orm/migrations';

/**
 * An event may be appended under a key (EventLog.append's `key`, a run's end): unique on its thread, so a
 * write retried after its first try's outcome was unknown finds the first event instead of storing it, and
 * its chat posts, twice. Null for every event before, and for most after (nulls are distinct in a unique index).
 */
export class EventKeys extends Migration {
  override up(): void {
    this.addSql('alter table "events" add column "key" text null');
    this.addSql('alter table "events" add constraint "events_thread_id_key_unique" unique ("thread_id", "key")');
  }

  override down(): void {
    this.addSql('alter table "events" drop constraint if exists "events_thread_id_key_unique"');
    this.addSql('alter table "events" drop column if exists "key"');
  }
}
