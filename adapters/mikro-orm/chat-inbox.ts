import type { MikroORM } from '@mikro-orm/postgresql';
import { SERVED_PLACES_MAX, type ChatCursor, type ChatInbox } from '../../ports/chat-inbox.ts';
import { runStatement } from './sql.ts';

/**
 * The chat inbox in the `chat_cursors` and `chat_claims` tables (migration 0012-chat-cursors) and
 * `chat_occupants` (0013-chat-occupants, an empty sender where two were seen for one id), and the places a
 * channel serves in `chat_served_places` (0024-served-rooms; added by one statement that counts first). A
 * claim is one statement: an insert, or an update of a claim that lapsed and is not done, so two
 * instances claiming one message at once get it once.
 */
export function mikroOrmChatInbox(orm: MikroORM): ChatInbox {
  return {
    async cursor(channel, place) {
      const [row] = await runStatement<{ id: string; at: Date | string }>(orm, 'select stanza_id as id, at from chat_cursors where channel = ? and place = ?', [channel, place]);
      return row === undefined ? null : { id: row.id, at: new Date(row.at).toISOString() } satisfies ChatCursor;
    },
    async advance(channel, place, cursor) {
      await runStatement(orm, `insert into chat_cursors (channel, place, stanza_id, at, updated_at) values (?, ?, ?, ?, now())
        on conflict (channel, place) do update set stanza_id = excluded.stanza_id, at = excluded.at, updated_at = now()`,
      [channel, place, cursor.id, cursor.at]);
    },
    async claim(channel, key, holder, leaseMs) {
      const rows = await runStatement(orm, `insert into chat_claims (channel, key, holder, claimed_until, done, created_at)
        values (?, ?, ?, now() + make_interval(secs => ?), false, now())
        on conflict (channel, key) do update set holder = excluded.holder, claimed_until = excluded.claimed_until
        where not chat_claims.done and (chat_claims.claimed_until <= now() or chat_claims.holder = excluded.holder)
        returning key`, [channel, key, holder, leaseMs / 1000]);
      return rows.length === 1;
    },
    async done(channel, key) {
      await runStatement(orm, `insert into chat_claims (channel, key, holder, claimed_until, done, created_at) values (?, ?, '', now(), true, now())
        on conflict (channel, key) do update set done = true`, [channel, key]);
    },
    async isDone(channel, key) {
      const [row] = await runStatement<{ done: boolean }>(orm, 'select done from chat_claims where channel = ? and key = ?', [channel, key]);
      return row?.done === true;
    },
    async pruneClaims(before) {
      const [row] = await runStatement<{ pruned: number }>(orm, `with gone as (
        delete from chat_claims where created_at < ?::timestamptz and (done or claimed_until <= now()) returning 1)
        select count(*)::int as pruned from gone`, [before.toISOString()]);
      return row?.pruned ?? 0;
    },
    async rememberOccupant(channel, place, occupant, sender) {
      await runStatement(orm, `insert into chat_occupants (channel, place, occupant, sender, updated_at) values (?, ?, ?, ?, now())
        on conflict (channel, place, occupant) do update
        set sender = case when chat_occupants.sender = excluded.sender then excluded.sender else '' end, updated_at = now()`,
      [channel, place, occupant, sender]);
    },
    async occupant(channel, place, occupant) {
      const [row] = await runStatement<{ sender: string }>(orm, 'select sender from chat_occupants where channel = ? and place = ? and occupant = ?', [channel, place, occupant]);
      return row === undefined || row.sender === '' ? null : row.sender;
    },
      async serve(channel, place) {
      const [row] = await runStatement<{ known: number; added: number }>(orm, `with known as (select 1 from chat_served_places where channel = ? and place = ?),
        added as (insert into chat_served_places (channel, place, served_at)
          select ?, ?, clock_timestamp()
          where not exists (select 1 from known) and (select count(*) from chat_served_places where channel = ?) < ?
          on conflict (channel, place) do nothing returning 1)
        select (select count(*) from known)::int as known, (select count(*) from added)::int as added`,
      [channel, place, channel, place, channel, SERVED_PLACES_MAX]);
      if (row?.added === 1) return 'added';
      if (row?.known === 1) return 'known';
      // Neither: the channel is full, or another instance added this very place a moment ago.
      const [again] = await runStatement(orm, 'select 1 from chat_served_places where channel = ? and place = ?', [channel, place]);
      return again === undefined ? 'full' : 'known';
    },
    async served(channel) {
      const rows = await runStatement<{ place: string }>(orm, 'select place from chat_served_places where channel = ? order by served_at, place', [channel]);
      return rows.map((row) => row.place);
    },
    async unserve(channel, place) {
      return (await runStatement(orm, 'delete from chat_served_places where channel = ? and place = ? returning place', [channel, place])).length === 1;
    },
  };
}
