import * as v from 'valibot';
import type { Schedule } from '../../ports/schedule-store.ts';
import type { Schedules } from '../../core/automation/schedules.ts';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { DirectiveBody } from '../runs/routes.ts';
import { answer, ScheduleInfo } from '../http/response-schemas.ts';
import { empty, json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';

const P = '/api/console/schedules';
const word = (max: number) => v.pipe(v.string('must be a string'), v.nonEmpty('must not be empty'), v.maxLength(max, `must be at most ${max} characters`), storable);
/** An expression's text; whether it is one is the cron reader's to say (422 at `body.cron`). */
const CronText = word(200);
const Timezone = word(100);

/** A thread, or a project and a model for a new thread each time: not both. */
const NewSchedule = v.pipe(
  v.object({
    cron: CronText,
    timezone: v.optional(Timezone, 'UTC'),
    text: DirectiveBody.entries.text,
    thread_id: v.optional(v.nullable(v.pipe(v.string('must be a string'), v.uuid('must be a thread id'))), null),
    project: v.optional(v.nullable(word(200)), null),
    model: v.optional(v.nullable(word(200)), null),
  }),
  v.forward(v.check((s) => s.thread_id === null || (s.project === null && s.model === null), 'must be absent with thread_id: the thread has its own'), ['project']),
);

const ScheduleEdit = v.pipe(
  v.strictObject({ enabled: v.optional(v.boolean('must be true or false')), cron: v.optional(CronText), timezone: v.optional(Timezone), text: v.optional(DirectiveBody.entries.text) }),
  v.check((edit) => Object.keys(edit).length > 0, 'must change at least one of enabled, cron, timezone, text'),
);

/** The owner's view of a schedule: the row without its owner (the caller). */
const shown = ({ owner: _, ...schedule }: Schedule) => schedule;

/** The caller's schedules (CONTRACT section 12, "Schedules"): create, list, change, remove. */
export function scheduleRoutes(schedules: Schedules): Route[] {
  return [
    route({
      method: 'POST',
      path: P,
      summary: 'A new schedule: a directive sent as the caller at the times a cron expression names in a time zone',
      operationId: 'createSchedule',
      auth: true,
      body: NewSchedule,
      responses: {
        201: answer('The schedule, with its next due time', ScheduleInfo),
        401: 'No valid credential',
        404: 'A thread the caller cannot use (`thread_unavailable`)',
        409: 'The caller holds as many schedules as allowed (`too_many_schedules`)',
        422: 'A bad cron expression or time zone, a project not in GET /projects, a project or model with a thread, or a bad text (`validation_failed`)',
      },
      handle: async ({ user, body }) => {
        const created = await schedules.create(user, { ...body, timezone: body.timezone ?? 'UTC' });
        return created.ok ? json(201, shown(created.value)) : problem(created.error);
      },
    }),
    route({
      method: 'GET',
      path: P,
      summary: "The caller's schedules, newest first",
      operationId: 'listSchedules',
      auth: true,
      responses: { 200: answer("The caller's schedules", v.array(ScheduleInfo)), 401: 'No valid credential' },
      handle: async ({ user }) => json(200, (await schedules.list(user.id)).map(shown)),
    }),
    route({
      method: 'PATCH',
      path: `${P}/:id`,
      summary: "Change one of the caller's schedules: it holds from the next due time on, on every instance",
      operationId: 'changeSchedule',
      auth: true,
      params: v.object({ id: UuidParam }),
      body: ScheduleEdit,
      // Someone else's schedule is unknown, whatever the body: a bad body is 404 before it is 422.
      pathRefusal: async ({ user, params }) => ((await schedules.list(user.id)).some((s) => s.id === params.id) ? null : { code: 'schedule_not_found' }),
      responses: {
        200: answer('The schedule as changed', ScheduleInfo),
        401: 'No valid credential',
        404: 'The caller has no schedule by this id (`schedule_not_found`)',
        422: 'A bad cron expression, time zone or text, or nothing to change (`validation_failed`)',
      },
      handle: async ({ user, params, body }) => {
        const changed = await schedules.update(user, params.id, body);
        return changed.ok ? json(200, shown(changed.value)) : problem(changed.error);
      },
    }),
    route({
      method: 'DELETE',
      path: `${P}/:id`,
      summary: "Remove one of the caller's schedules: no due time of it fires from now on",
      operationId: 'removeSchedule',
      auth: true,
      params: v.object({ id: UuidParam }),
      responses: { 204: 'Removed', 401: 'No valid credential', 404: 'The caller has no schedule by this id (`schedule_not_found`)', 422: 'Not a schedule id (`validation_failed`)' },
      handle: async ({ user, params }) => ((await schedules.remove(user.id, params.id)) ? empty(204) : problem({ code: 'schedule_not_found' })),
    }),
  ];
}
