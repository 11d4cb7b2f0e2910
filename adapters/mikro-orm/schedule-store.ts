import type { MikroORM } from '@mikro-orm/postgresql';
import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import { isUuid, iso, runStatement } from './sql.ts';

const SCHEDULE = `id, owner, cron, timezone, text, thread_id, project, model, enabled, ${iso('next_run_at')} as next_run_at, ${iso('created_at')} as created_at`;
const FIRE = `schedule_id, ${iso('due_at')} as due_at, owner, text, thread_id, project, model`;

/**
 * Schedules in `schedules`, fires under way in `schedule_fires`. A claim is one statement: a conditional
 * update of `next_run_at` (its row lock makes a second claimer of the same due time wait, then find it moved)
 * and the fire's insert under its primary key (schedule, due time), from the row it moved.
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
    async claim({ id, expected, next, fire_at, at }) {
      if (!isUuid(id)) return null;
      // One statement: the update always runs (a claim with no fire only moves the schedule on); the fire is
      // inserted from what it moved, so both or neither are written.
      const [fire] = await runStatement<Fire>(orm, `with moved as (update schedules set next_run_at = ?::timestamptz
          where id = ?::uuid and enabled and next_run_at = ?::timestamptz returning id, owner, text, thread_id, project, model)
        insert into schedule_fires (schedule_id, due_at, owner, text, thread_id, project, model, claimed_at)
          select id, ?::timestamptz, owner, text, thread_id, project, model, ?::timestamptz from moved where ?::timestamptz is not null
        on conflict do nothing returning ${FIRE}`, [next, id, expected, fire_at, at, fire_at]);
      return fire ?? null;
    },
    unfinished: (before, limit) => runStatement<Fire>(orm, `select ${FIRE} from schedule_fires where claimed_at <= ?::timestamptz
      order by claimed_at limit ?`, [before, limit]),
    async done(scheduleId, dueAt) {
      await runStatement(orm, 'delete from schedule_fires where schedule_id = ? and due_at = ?::timestamptz', [scheduleId, dueAt]);
    },
  };
}
