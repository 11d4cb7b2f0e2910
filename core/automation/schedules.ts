import type { Failure } from '../../domain/errors.ts';
import type { User } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { Accounts } from '../../ports/accounts.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { Clock } from '../../ports/clock.ts';
import type { CronReader } from '../../ports/cron.ts';
import type { DerivedId } from '../../ports/derived-id.ts';
import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';
import type { PathAccess } from '../reads/path-access.ts';
import type { FireSent } from './scheduler.ts';
import type { KeyedDirective, OpenThreads } from '../runs/open-threads.ts';

/** How many schedules one person may hold. */
export const MAX_SCHEDULES_PER_USER = 50;

/** A new schedule as its body gives it. */
export interface NewSchedule {
  readonly cron: string;
  readonly timezone: string;
  readonly text: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
}

/** A change of a schedule as its body gives it. */
export interface ScheduleEdit {
  readonly enabled?: boolean;
  readonly cron?: string;
  readonly timezone?: string;
  readonly text?: string;
}

const invalid = (path: string, message: string): Failure => ({ code: 'validation_failed', errors: [{ path: `body.${path}`, message }] });

/**
 * Schedules (contract section 12), kept by their owner: created (the expression and zone read once, 422 when
 * they cannot be), listed, changed (a change holds from the next due time on, on every instance: it is the
 * stored row the scheduler claims) and removed. `send` is what the scheduler does with a claimed due time.
 */
export function schedules(deps: {
  readonly store: ScheduleStore;
  readonly cron: CronReader;
  readonly accounts: Pick<Accounts, 'account'>;
  readonly catalog: Pick<Catalog, 'projects'>;
  readonly threadAccess: PathAccess;
  /** Directives to keys, many at once: the fires to new threads opened together (core/runs/open-threads.ts). */
  readonly open: OpenThreads;
  readonly clock: Pick<Clock, 'now'>;
  readonly newId: () => string;
  readonly derivedId: DerivedId;
}) {
  const { store } = deps;
  /** The first due time after now, or the refusal of an expression or zone that cannot be read. */
  const nextAfterNow = (cron: string, timezone: string): Result<string | null, Failure> => {
    const read = deps.cron(cron, timezone);
    if (!read.ok) return fail(invalid(read.error.path, read.error.message));
    const next = read.value.next(deps.clock.now());
    return ok(next === null ? null : new Date(next).toISOString());
  };
  return {
    async create(user: User, body: NewSchedule): Promise<Result<Schedule, Failure>> {
      const next = nextAfterNow(body.cron, body.timezone);
      if (!next.ok) return next;
      if (body.thread_id !== null) {
        const refused = await deps.threadAccess(user, body.thread_id);
        if (refused !== null) return fail(refused);
      } else if (body.project !== null && !(await deps.catalog.projects()).includes(body.project)) {
        return fail(invalid('project', 'is not a project of GET /projects'));
      }
      const schedule: Schedule = {
        id: deps.newId(), owner: user.id, ...body, enabled: true, next_run_at: next.value, created_at: new Date(deps.clock.now()).toISOString(),
      };
      return (await store.create(schedule, MAX_SCHEDULES_PER_USER)) ? ok(schedule) : fail({ code: 'too_many_schedules' });
    },

    list: (userId: string) => store.list(userId),

    /**
     * A change: a new expression or zone, or enabling a disabled schedule, makes the next due time the first
     * after now (times passed while disabled are not fired); a new text or a disable keeps it.
     */
    async update(user: User, id: string, edit: ScheduleEdit): Promise<Result<Schedule, Failure>> {
      const current = (await store.list(user.id)).find((s) => s.id === id);
      if (current === undefined) return fail({ code: 'schedule_not_found' });
      const cron = edit.cron ?? current.cron;
      const timezone = edit.timezone ?? current.timezone;
      const moved = edit.cron !== undefined || edit.timezone !== undefined || (edit.enabled === true && !current.enabled);
      let nextRun = current.next_run_at;
      if (moved) {
        const next = nextAfterNow(cron, timezone);
        if (!next.ok) return next;
        nextRun = next.value;
      }
      const changed = await store.update(user.id, id, { ...edit, next_run_at: nextRun });
      return changed === null ? fail({ code: 'schedule_not_found' }) : ok(changed);
    },

    remove: (userId: string, id: string) => store.remove(userId, id),

    /**
     * Sends a look's claimed due times, each as a directive of the schedule's owner, as a hook's call does: to the thread
     * (queued when busy), or to a new thread whose key is derived from the fire's key. The `message_id`
     * `schedule:<id>:<due time>` makes a fire sent twice run once. A refusal (the owner deactivated, the thread
     * no longer theirs, an agent down) is for good: that due time is skipped, and what refused it is answered (the
     * scheduler logs it); only a thrown error is retried.
     */
    async send(fires: readonly Fire[]): Promise<FireSent[]> {
      // Each owner is read once per look, and checked at every send: a deactivated owner's fires are refused.
      const owners = new Map<string, ReturnType<typeof deps.accounts.account>>();
      const sent: FireSent[] = new Array(fires.length);
      const directives: { index: number; directive: KeyedDirective }[] = [];
      for (const [index, fire] of fires.entries()) {
        if (!owners.has(fire.owner)) owners.set(fire.owner, deps.accounts.account(fire.owner));
        const owner = await owners.get(fire.owner)!.catch((error: unknown) => ({ failed: error }));
        if (owner !== null && 'failed' in owner) {
          sent[index] = owner;
          continue;
        }
        if (owner === null || !owner.active) {
          sent[index] = { refused: 'owner_inactive' };
          continue;
        }
        const key = `schedule:${fire.schedule_id}:${fire.due_at}`;
        const toThread = fire.thread_id !== null;
        directives.push({
          index,
          directive: {
            user: { id: owner.id, name: owner.name }, key: fire.thread_id ?? deps.derivedId(key), origin: { kind: 'schedule', id: fire.schedule_id },
            body: {
              text: fire.text, message_id: key, model: toThread ? null : fire.model, project: toThread ? null : fire.project,
              permission_mode: null, effort: null, when_busy: toThread ? 'queue' : null,
            },
          },
        });
      }
      // Fires to new threads are opened together; the rest (to a thread: queued when busy) one by one.
      const answers = await deps.open(directives.map((d) => d.directive));
      for (const [at, { index }] of directives.entries()) {
        const answer = answers[at]!;
        sent[index] = 'failed' in answer ? answer : answer.ok ? 'done' : { refused: answer.error.code };
      }
      return sent;
    },
  };
}

export type Schedules = ReturnType<typeof schedules>;
