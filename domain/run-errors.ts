import { storableText } from './text.ts';

/**
 * Why a run ended other than by succeeding: the code a client may branch on, and its default
 * reason. A run's `error`, and the `run_error` / `run_cancelled` events, carry `<code>: <reason>`;
 * never a SQL statement, its values or an upstream body.
 */
export const RUN_ERRORS = {
  /** The agent process could not start, needs authentication, exited, or answered the prompt with an error. */
  agent_failed: 'the agent failed',
  /** Storage failed while the turn was being recorded. */
  storage_failed: 'storage failed while the turn was recorded',
  /** The instance running the turn stopped renewing its lease (it crashed, or lost its database). */
  turn_lease_expired: 'the instance running this turn stopped; the turn was swept',
  /** The agent sent nothing for the idle time-out: the turn was cancelled. */
  agent_idle: 'the agent sent nothing for too long; the turn was cancelled',
  /** A permission ask went unanswered for the idle time-out: the turn was cancelled. */
  approval_timeout: 'no answer came to a permission ask; the turn was cancelled',
  /** A user cancelled the turn. */
  cancelled: 'cancelled by a user',
  /** Anything else: logged in full, recorded without detail. */
  internal: 'the turn failed unexpectedly',
} as const;

export type RunErrorCode = keyof typeof RUN_ERRORS;

/** The longest reason recorded: enough for a sentence, too short for a body or a statement. */
export const MAX_RUN_REASON = 200;

/** `<code>: <reason>`, the reason cut to its first line and {@link MAX_RUN_REASON} characters, storable. */
export function runError(code: RunErrorCode, reason: string = RUN_ERRORS[code]): string {
  const line = storableText(reason).split(/\r?\n/, 1)[0]!.trim() || RUN_ERRORS[code];
  return `${code}: ${line.length > MAX_RUN_REASON ? `${line.slice(0, MAX_RUN_REASON - 1)}…` : line}`;
}
