import { Migration } from '@mikro-orm/migrations';

/**
 * Webhooks out (contract section 12): `webhooks` holds each webhook with its signing secret (kept as it is:
 * every send signs with it; no read returns it); `webhook_deliveries` is the outbox, one row per event and
 * webhook, kept after it is delivered to be shown (pruned after 7 days).
 *
 * `webhook_enqueue` puts an event in the outbox for every enabled webhook subscribed to its type, naming its
 * thread (or none), whose owner can read the thread; the trigger on `events` calls it for every stored
 * `run_finished`, `run_error` (as `run_failed`), `approval_requested`, `question_asked` and `queued`, so an
 * event and its deliveries are one write, whichever statement stores the event. Its `when` clause keeps
 * every other event (deltas, tool calls) free of it; the insert reads `webhooks`, empty or small.
 */
export class Webhooks extends Migration {
  override up(): void {
    const statements = [
      `create table "webhooks" (
        "id" uuid not null,
        "owner" text not null,
        "url" text not null,
        "events" text[] not null,
        "thread_ids" uuid[] null,
        "secret" text not null,
        "enabled" boolean not null,
        "created_at" timestamptz not null,
        constraint "webhooks_pkey" primary key ("id"))`,
      `create index "webhooks_owner_index" on "webhooks" ("owner")`,
      `create table "webhook_deliveries" (
        "id" uuid not null,
        "webhook_id" uuid not null,
        "type" text not null,
        "thread_id" uuid not null,
        "run_id" text null,
        "data" jsonb not null,
        "created_at" timestamptz not null,
        "status" text not null,
        "attempts" int not null,
        "next_at" timestamptz null,
        "last_status" int null,
        "last_error" text null,
        "holder" text null,
        "lease_until" timestamptz null,
        constraint "webhook_deliveries_pkey" primary key ("id"),
        constraint "webhook_deliveries_webhook_id_foreign" foreign key ("webhook_id") references "webhooks" ("id") on delete cascade)`,
      `create index "webhook_deliveries_due_index" on "webhook_deliveries" ("next_at") where "status" = 'pending'`,
      `create index "webhook_deliveries_webhook_index" on "webhook_deliveries" ("webhook_id", "created_at")`,
      `create function "webhook_enqueue"(p_thread uuid, p_type text, p_run text, p_data jsonb, p_at timestamptz) returns integer
        language sql as $$
        with added as (
          insert into webhook_deliveries (id, webhook_id, type, thread_id, run_id, data, created_at, status, attempts)
          select gen_random_uuid(), w.id, p_type, p_thread, p_run, p_data, p_at, 'pending', 0
          from webhooks w join threads t on t.id = p_thread
          where w.enabled and p_type = any(w.events) and (w.thread_ids is null or p_thread = any(w.thread_ids))
            and (t.owner = w.owner or exists (select 1 from thread_members m where m.thread_id = p_thread and m.user_id = w.owner))
          returning 1)
        select count(*)::int from added
        $$`,
      `create function "webhook_event"() returns trigger language plpgsql as $$
        begin
          perform webhook_enqueue(new.thread_id, case new.type when 'run_error' then 'run_failed' else new.type end,
            coalesce(new.data ->> 'run_id', new.data -> 'pending' ->> 'run_id'), new.data, new.at);
          return null;
        end
        $$`,
      `create trigger "events_webhooks" after insert on "events" for each row
        when (new.type in ('run_finished', 'run_error', 'approval_requested', 'question_asked', 'queued'))
        execute function webhook_event()`,
    ];
    for (const statement of statements) this.addSql(statement);
  }

  override down(): void {
    this.addSql('drop trigger if exists "events_webhooks" on "events"');
    this.addSql('drop function if exists "webhook_event"()');
    this.addSql('drop function if exists "webhook_enqueue"(uuid, text, text, jsonb, timestamptz)');
    this.addSql('drop table if exists "webhook_deliveries"');
    this.addSql('drop table if exists "webhooks"');
  }
}
