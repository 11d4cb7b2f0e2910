/**
 * A schedule (contract section 12): a directive sent as its owner at the times a cron expression names in a
 * time zone; with `thread_id` to that thread (queued when busy), without to a new thread each time, with
 * `project` and `model` as a directive's.
 */
export interface Schedule {
  readonly id: string;
  readonly owner: string;
  readonly cron: string;
  readonly timezone: string;
  readonly text: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
  readonly enabled: boolean;
  /** ISO 8601: the next due time; null when the expression names no more times. */
  readonly next_run_at: string | null;
  /** ISO 8601, UTC. */
  readonly created_at: string;
}

/** A change by the owner: the fields to set; `next_run_at` is what the change makes the next due time. */
export interface ScheduleChange {
  readonly enabled?: boolean;
  readonly cron?: string;
  readonly timezone?: string;
  readonly text?: string;
  readonly next_run_at: string | null;
}

/** A due time claimed by one instance: what to send, as the schedule said when it was claimed. */
export interface Fire {
  readonly schedule_id: string;
  /** ISO 8601: the due time fired; with the schedule's id, the fire's key. */
  readonly due_at: string;
  readonly owner: string;
  readonly text: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
}

/** A due time to claim: the schedule moved from `expected` to `next`, and the fire of `fire_at` recorded (none when null). */
export interface Claim {
  readonly id: string;
  readonly expected: string;
  readonly next: string | null;
  readonly fire_at: string | null;
  /** ISO 8601: when it is claimed (a fire claimed long ago and not done is sent again). */
  readonly at: string;
}

/**
 * Stored schedules, and the due times being fired. A due time is claimed once: the claim moves the schedule's
 * `next_run_at` from that due time on (a compare-and-swap) and records the fire in one transaction, so of any
 * number of instances claiming it at once, one gets it. A fire stays recorded until it is marked done, so one
 * whose instance stopped before sending is sent again by another (its directive's `message_id` is made of the
 * fire's key, so a fire sent twice runs once).
 */
export interface ScheduleStore {
  /** Stores a schedule; false (nothing stored) when its owner holds `max` already. */
  create(schedule: Schedule, max: number): Promise<boolean>;
  /** The owner's schedules, newest first. */
  list(owner: string): Promise<Schedule[]>;
  /** Changes one of the owner's schedules; null when the owner has none by that id. */
  update(owner: string, id: string, change: ScheduleChange): Promise<Schedule | null>;
  /** Removes one of the owner's schedules; false when the owner has none by that id. */
  remove(owner: string, id: string): Promise<boolean>;
  /** Enabled schedules whose `next_run_at` is at or before `now` (ISO 8601), earliest first, at most `limit`. */
  due(now: string, limit: number): Promise<Schedule[]>;
  /**
   * Claims due times, each as one claim alone would: when the schedule is enabled and its `next_run_at` is still
   * `expected`, sets it to `next` and, when `fire_at` is not null, records the fire of `fire_at` (claimed at `at`),
   * both or neither. Answers the fires recorded (their text and target as the schedule holds them now), in no set
   * order; a claim that recorded nothing (another instance moved it first, the schedule changed or went, or
   * `fire_at` is null) has none. All the claims are written together, or none.
   */
  claim(claims: readonly Claim[]): Promise<Fire[]>;
  /**
   * Claims again fires claimed at or before `before` (ISO 8601) and not yet done (their instance stopped before
   * sending them), oldest first, at most `limit`: each is claimed anew at `at`, so of instances reclaiming at once one
   * gets it (another's is skipped, not waited for), and it is not reclaimed again before its new lease ends.
   */
  reclaim(before: string, at: string, limit: number): Promise<Fire[]>;
  /** Marks fires done: they are not sent again. */
  done(fires: readonly Pick<Fire, 'schedule_id' | 'due_at'>[]): Promise<void>;
}
