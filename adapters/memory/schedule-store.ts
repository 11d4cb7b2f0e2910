import type { Fire, Schedule, ScheduleStore } from '../../ports/schedule-store.ts';

/** What the memory adapter keeps of schedules: schedules by id, and fires not yet done by `schedule\u0000due` with their claim time. */
export interface MemorySchedules {
  readonly schedules: Map<string, Schedule>;
  readonly fires: Map<string, { readonly fire: Fire; readonly claimed_at: string }>;
}

const newestFirst = (a: Schedule, b: Schedule) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
const ms = (iso: string) => Date.parse(iso);
/** A fire's key in `fires`: its schedule and its due time, in one form whatever form the time came in. */
const key = (fire: Pick<Fire, 'schedule_id' | 'due_at'>) => `${fire.schedule_id}\u0000${new Date(ms(fire.due_at)).toISOString()}`;

/** Schedules in memory; each method checks and writes without an `await` in between, so a due time is claimed once. */
export function memoryScheduleStore(state: MemorySchedules): ScheduleStore {
  return {
    async create(schedule, max) {
      if ([...state.schedules.values()].filter((s) => s.owner === schedule.owner).length >= max) return false;
      state.schedules.set(schedule.id, schedule);
      return true;
    },
    list: async (owner) => [...state.schedules.values()].filter((s) => s.owner === owner).sort(newestFirst),
    async update(owner, id, change) {
      const schedule = state.schedules.get(id);
      if (schedule === undefined || schedule.owner !== owner) return null;
      const changed: Schedule = { ...schedule, ...change };
      state.schedules.set(id, changed);
      return changed;
    },
    async remove(owner, id) {
      const schedule = state.schedules.get(id);
      if (schedule === undefined || schedule.owner !== owner) return false;
      return state.schedules.delete(id);
    },
    due: async (now, limit) =>
      [...state.schedules.values()]
        .filter((s) => s.enabled && s.next_run_at !== null && ms(s.next_run_at) <= ms(now))
        .sort((a, b) => ms(a.next_run_at!) - ms(b.next_run_at!) || (a.id < b.id ? -1 : 1))
        .slice(0, limit),
    async claim(claims) {
      const fires: Fire[] = [];
      for (const { id, expected, next, fire_at, at } of claims) {
        const schedule = state.schedules.get(id);
        if (schedule === undefined || !schedule.enabled || schedule.next_run_at === null || ms(schedule.next_run_at) !== ms(expected)) continue;
        state.schedules.set(id, { ...schedule, next_run_at: next });
        if (fire_at === null) continue;
        const fire: Fire = {
          schedule_id: id, due_at: new Date(ms(fire_at)).toISOString(), owner: schedule.owner, text: schedule.text,
          thread_id: schedule.thread_id, project: schedule.project, model: schedule.model,
        };
        if (state.fires.has(key(fire))) continue;
        state.fires.set(key(fire), { fire, claimed_at: at });
        fires.push(fire);
      }
      return fires;
    },
    async reclaim(before, at, limit) {
      const stale = [...state.fires.values()]
        .filter((f) => ms(f.claimed_at) <= ms(before))
        .sort((a, b) => ms(a.claimed_at) - ms(b.claimed_at))
        .slice(0, limit);
      for (const { fire } of stale) state.fires.set(key(fire), { fire, claimed_at: at });
      return stale.map((f) => f.fire);
    },
    async done(fires) {
      for (const fire of fires) state.fires.delete(key(fire));
    },
  };
}
