/*
 * What the thread list says is going on in a thread. The list is a read, true when it was made; the open
 * thread's live events say when that changes (a run ends, an ask is answered), so the newer of the two is
 * shown. Reading the list again right after a run's end is no cure on its own: the turn is released just
 * after `reflex_asleep` is stored, so such a read may still say "running". Pure, tested in Node.
 */
import { runningRun, type Timeline } from './timeline.ts';

/** A thread's activity as `GET /api/console/threads` answers it. */
export interface Activity {
  readonly turn_running: boolean;
  readonly approvals: number;
  readonly questions: number;
  /** Directives waiting in the thread's queue. */
  readonly queued: number;
}

/** An open thread's activity as its live events left it, and when (`Date.now()`) they said so. */
export interface LiveActivity {
  readonly activity: Activity;
  readonly at: number;
}

/** The activity an open thread's timeline shows: a run running, the asks waiting on the page, the directives queued. */
export function activityOf(timeline: Timeline): Activity {
  const count = (kind: 'approval' | 'question') => timeline.pending.filter((item) => item.kind === kind).length;
  return { turn_running: runningRun(timeline) !== null, approvals: count('approval'), questions: count('question'), queued: timeline.queue.length };
}

export const sameActivity = (a: Activity, b: Activity): boolean =>
  a.turn_running === b.turn_running && a.approvals === b.approvals && a.questions === b.questions && a.queued === b.queued;

/**
 * The activity to show for a listed thread: what its live events said, when they said it at or after the
 * list's read started (`readAt`); else the read's.
 */
export const shownActivity = (read: Activity, live: LiveActivity | undefined, readAt: number): Activity =>
  live !== undefined && live.at >= readAt ? live.activity : read;
