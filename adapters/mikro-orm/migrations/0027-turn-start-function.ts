import { Migration } from '@mikro-orm/migrations';

/**
 * A directive that starts a turn on an idle thread, in one statement (adapters/mikro-orm/directive-writes.ts): the
 * thread's row locked, a `message_id` already kept answered as kept, the conversations locked in id order (the order
 * every writer takes them in), and, only when the target is the thread's latest conversation, not moved, with no
 * turn running and nothing queued, the directive row, the claim, the user's message, the run, the prompt's model
 * message and the `message` and `run_started` events written. Anything else answers `{"kind": "other"}` having
 * written nothing, and the caller runs the whole transaction, which decides every case (queued, busy, moved,
 * changed). One round trip where the transaction takes five: on the embedded database each is a turn of its one
 * session (docs/benchmarks.md, turn). A function, not one SQL statement: its statements run in this order, so the
 * locks are taken in the order writers take them.
 */
export class TurnStartFunction extends Migration {
  override up(): void {
    this.addSql(`create function "console_start_turn"(
        p_thread uuid, p_conversation uuid, p_message_id text, p_author text, p_text text,
        p_message uuid, p_message_at timestamptz, p_origin jsonb,
        p_run uuid, p_run_at timestamptz, p_directory text, p_permission_mode text, p_holder text, p_lease_seconds double precision,
        p_prompt uuid, p_prompt_at timestamptz, p_message_event jsonb, p_started_event jsonb) returns jsonb
      language plpgsql as $$
      declare
        v_key text;
        v_kept record;
        v_conversation record;
        v_target boolean := false;
        v_moved boolean := false;
        v_session text;
        v_running boolean := false;
        v_last uuid;
        v_answer jsonb;
        v_seq int;
        v_events jsonb;
      begin
        select key into v_key from threads where id = p_thread for no key update;
        if not found then return jsonb_build_object('kind', 'other'); end if;
        if p_message_id is not null then
          select answer, author into v_kept from directives where thread_id = p_thread and message_id = p_message_id;
          if found then return jsonb_build_object('kind', 'kept', 'answer', v_kept.answer, 'author', v_kept.author); end if;
        end if;
        for v_conversation in select id, turn_running, moved_to, session_id from conversations where thread_id = p_thread order by id for update loop
          if v_conversation.id = p_conversation then
            v_target := true;
            v_moved := v_conversation.moved_to is not null;
            v_session := v_conversation.session_id;
          end if;
          v_running := v_running or v_conversation.turn_running;
          v_last := v_conversation.id;
        end loop;
        if not v_target or v_moved or v_running or v_last <> p_conversation
          or exists (select 1 from directive_queue where thread_id = p_thread) then
          return jsonb_build_object('kind', 'other');
        end if;
        v_answer := jsonb_build_object('thread_id', p_thread, 'key', v_key, 'conversation_id', p_conversation, 'run_id', p_run);
        if p_message_id is not null then
          insert into directives (thread_id, message_id, answer, author) values (p_thread, p_message_id, v_answer, p_author)
            on conflict (thread_id, message_id) do nothing;
          if not found then return jsonb_build_object('kind', 'other'); end if;
        end if;
        update conversations set turn_running = true, permission_mode = coalesce(p_permission_mode, permission_mode),
          turn_run_id = p_run, turn_holder = p_holder, turn_expires_at = now() + make_interval(secs => p_lease_seconds)
          where id = p_conversation;
        insert into messages (id, thread_id, role, text, artifact_id, created_at, origin)
          values (p_message, p_thread, 'user', p_text, null, p_message_at, p_origin);
        insert into runs (id, conversation_id, directory, status, error, started_at, ended_at, message_id)
          values (p_run, p_conversation, p_directory, 'running', null, p_run_at, null, p_message);
        insert into model_messages (id, run_id, role, content, created_at) values (p_prompt, p_run, 'user', p_text, p_prompt_at);
        select coalesce(max(seq), 0) into v_seq from events where thread_id = p_thread;
        with added as (
          insert into events (thread_id, seq, type, at, data)
          values (p_thread, v_seq + 1, 'message', now(), p_message_event), (p_thread, v_seq + 2, 'run_started', now(), p_started_event)
          returning seq, type, thread_id, to_char(at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as at, data)
        select jsonb_agg(to_jsonb(added) order by added.seq) into v_events from added;
        return jsonb_build_object('kind', 'started', 'key', v_key, 'session_id', v_session, 'events', v_events);
      end
      $$`);
  }

  override down(): void {
    this.addSql(`drop function if exists "console_start_turn"(uuid, uuid, text, text, text, uuid, timestamptz, jsonb, uuid, timestamptz, text, text, text,
      double precision, uuid, timestamptz, jsonb, jsonb)`);
  }
}
