import type { EventType } from './events.ts';

/** What a webhook may be sent (contract section 12): `run_failed` is a run that ended in error, `merged` a thread's changes merged into its base. */
export const WEBHOOK_EVENTS = ['run_finished', 'run_failed', 'approval_requested', 'question_asked', 'queued', 'merged'] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENTS)[number];

/** The stored events webhooks hear of, by the name a webhook gives them (`merged` is no stored event: the merge says it). */
export const WEBHOOK_EVENT_OF: Readonly<Partial<Record<EventType, WebhookEventType>>> = Object.freeze({
  run_finished: 'run_finished',
  run_error: 'run_failed',
  approval_requested: 'approval_requested',
  question_asked: 'question_asked',
  queued: 'queued',
});

/** The run a stored event is of: its `run_id`, or its pending item's; null when it has none (a queued directive). */
export function runIdOf(data: Readonly<Record<string, unknown>>): string | null {
  if (typeof data['run_id'] === 'string') return data['run_id'];
  const pending = data['pending'] as { run_id?: unknown } | undefined;
  return typeof pending?.run_id === 'string' ? pending.run_id : null;
}
