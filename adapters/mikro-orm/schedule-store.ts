import type { MikroORM } from '@mikro-orm/postgresql';
import type { Claim, Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import { isUuid, iso, prepared, runStatement } from './sql.ts';

const SCHEDULE = `id, owner, cron, timezone, text, thread_id, project, model, enabled, ${iso('next_run_at')} as next_run_at, ${iso('created_at')} as created_at`;
const FIRE = `schedule_id, ${iso('due_at')} as due_at, owner, text, thread_id, project, model`;

/**
 * Claims in one statement, each as it would be alone: each schedule still at its expected due time is locked and
 * moved on (a claim with no fire only moves it), and each fire is inserted from the row it moved, so a schedule's
 * move and its fire are both written or neither. A row another claimer holds is skipped, not waited for: it is
 * being moved by that one (or changed by its owner, and due again at the next look). Instances looking at once
 * split a batch between them, and never deadlock on rows locked in different orders.
 */
const CLAIM = prepared(`with claim as (select * from unnest(?::uuid[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[], ?::timestamptz[])
      as c(id, expected, next, fire_at, at)),
    locked as (select s.id from schedules s join claim on claim.id = s.id where s.enabled and s.next_run_at = claim.expected
      order by s.id for update of s skip locked),
    moved as (update schedules s set next_run_at = claim.next from locked join claim on claim.id = locked.id
      where s.id = locked.id and s.enabled and s.next_run_at = claim.expected
      returning s.id, s.owner, s.text, s.thread_id, s.project, s.model, claim.fire_at, claim.at)
  insert into schedule_fires (schedule_id, due_at, owner, text, thread_id, project, model, claimed_at)
    select id, fire_at, owner, text, thread_id, project, model, at from moved where fire_at is not null
  on conflict do nothing returning ${FIRE}`);

/** Stale fires claimed anew, one instance each: a fire another is reclaiming is skipped, not waited for. */
const RECLAIM = prepared(`with stale as (select schedule_id, due_at from schedule_fires where claimed_at <= ?::timestamptz
      order by claimed_at, schedule_id, due_at limit ? for update skip locked)
  update schedule_fires f set claimed_at = ?::timestamptz from stale where f.schedule_id = stale.schedule_id and f.due_at = stale.due_at
  returning f.schedule_id, ${iso('f.due_at')} as due_at, f.owner, f.text, f.thread_id, f.project, f.model`);

const DONE = prepared(`delete from schedule_fires f using unnest(?::uuid[], ?::timestamptz[]) as d(schedule_id, due_at)
  where f.schedule_id = d.schedule_id and f.due_at = d.due_at`);

/**
 * Schedules in `schedules`, fires under way in `schedule_fires`. A look's claims are one statement (CLAIM): a
 * conditional update of each `next_run_at` and each fire's insert under its primary key (schedule, due time).
 */
export function mikroOrmScheduleStore(orm: MikroORM): ScheduleStore {
  return {
    async create(s, max) {
      const rows = await runStatement(orm, `insert into schedules (id, owner, cron, timezone, text, thread_id, project, model, enabled, next_run_at, created_at)
        select ?::uuid, ?, ?, ?, ?, ?::uuid, ?, ?, ?::boolean, ?::timestamptz, ?::timestamptz where (select count(*) from schedules where owner = ?) < ?::int returning id`,
        [s.id, s.owner, s.cron, s.timezone, s.text, s.thread_id, s.project, s.model, s.enabled, s.next_run_at, s.created_at, s.owner, max]);
      return rows.length === 1;
    },
    list: (owner) => runStatement<Schedule>(orm, `select ${SCHEDULE} from schedules where owner = ? order by id desc`, [owner]),
    async update(owner, id, change) {
      if (!isUuid(id)) return null;
      const [row] = await runStatement<Schedule>(orm, `update schedules set enabled = coalesce(?::boolean, enabled), cron = coalesce(?, cron),
        timezone = coalesce(?, timezone), text = coalesce(?, text), next_run_at = ?::timestamptz where id = ? and owner = ? returning ${SCHEDULE}`,
        [change.enabled ?? null, change.cron ?? null, change.timezone ?? null, change.text ?? null, change.next_run_at, id, owner]);
      return row ?? null;
    },
    async remove(owner, id) {
      if (!isUuid(id)) return false;
      return (await runStatement(orm, 'delete from schedules where id = ? and owner = ? returning id', [id, owner])).length === 1;
    },
    due: (now, limit) => runStatement<Schedule>(orm, `select ${SCHEDULE} from schedules where enabled and next_run_at <= ?::timestamptz
      order by next_run_at, id limit ?`, [now, limit]),
    async claim(claims) {
      const wellFormed = claims.filter((c) => isUuid(c.id));
      if (wellFormed.length === 0) return [];
      const column = <K extends keyof Claim>(name: K) => wellFormed.map((c) => c[name]);
      return runStatement<Fire>(orm, CLAIM, [column('id'), column('expected'), column('next'), column('fire_at'), column('at')]);
    },
    reclaim: (before, at, limit) => runStatement<Fire>(orm, RECLAIM, [before, limit, at]),
    async done(fires) {
      if (fires.length === 0) return;
      // In one order, whatever order they came in: two instances marking the same fires lock them in the same order.
      const ordered = [...fires].sort((a, b) => (a.schedule_id < b.schedule_id ? -1 : a.schedule_id > b.schedule_id ? 1 : Date.parse(a.due_at) - Date.parse(b.due_at)));
      await runStatement(orm, DONE, [ordered.map((f) => f.schedule_id), ordered.map((f) => f.due_at)]);
    },
  };
}
