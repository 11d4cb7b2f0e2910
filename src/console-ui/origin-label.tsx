/**
 * Where a directive came from when no person typed it (its ledger message's or queued item's `origin`): a small
 * label beside its author, "from schedule <cron>" (the id when the schedule is not one of the viewer's, or is gone)
 * or "from hook <id>"; nothing for a person's. Browser code.
 */
import type { DirectiveOriginShape } from './timeline.ts';

/** The viewer's schedules' cron expressions by id (null: not read). */
export type ScheduleCrons = Readonly<Record<string, string>> | null;

export function OriginLabel({ origin, crons = null }: { origin: DirectiveOriginShape | null | undefined; crons?: ScheduleCrons }) {
  if (origin === null || origin === undefined) return null;
  const cron = origin.kind === 'schedule' ? crons?.[origin.id] : undefined;
  return (
    <span class="origin" data-origin-kind={origin.kind} data-origin-id={origin.id} title={`Sent by ${origin.kind} ${origin.id}, not typed by a person`}>
      from {origin.kind} <code>{cron ?? origin.id}</code>
    </span>
  );
}
