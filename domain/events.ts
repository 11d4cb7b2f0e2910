/** The kinds of wire events the live socket carries (contract section 5). */
export const EVENT_TYPES = [
  'run_started',
  'message',
  'approval_requested',
  'question_asked',
  // A mode, model or effort the agent did not take (not offered by the session, or refused): the run goes on.
  'posture_refused',
  'tool_call',
  'plan',
  'usage',
  'available_commands',
  'run_error',
  'run_cancelled',
  'run_finished',
  'gateway',
  // A directive sent while the thread was busy waits in its queue (data: the queued item); edited, it is sent again
  // and its earlier `queued` events lose their text (supersededData).
  'queued',
  // A queued directive left the queue: its turn starts (`run_id`, before its `run_started`), or it was withdrawn (`run_id` null).
  'dequeued',
  // A directive sent with `when_busy: "steer"` went into the running turn (`run_id`, and its ledger `message`).
  'steered',
  'reflex_asleep',
  // A rewind took runs back (`run_id`: the first; `runs`: all of them; `restored`: the worktree's checkpoint, or null).
  'rewound',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/** One event of a thread, stored with its per-thread `seq` before it is published. */
export interface WireEvent {
  /** Per-thread, increasing from 1, no gaps. */
  readonly seq: number;
  readonly type: EventType;
  readonly thread_id: string;
  /** ISO time the event was stored. */
  readonly at: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * What an earlier `queued` event of an edited item keeps (QueueEdits.editQueued): all of it but
 * its text, and the `seq` of the event that replaced it. Edits are many and texts long (100 000
 * characters each): a replay that carried every version grew by the whole text per edit.
 */
export function supersededData(data: Readonly<Record<string, unknown>>, by: number): Readonly<Record<string, unknown>> {
  const { text: _text, ...kept } = data;
  return { ...kept, superseded_by: by };
}
