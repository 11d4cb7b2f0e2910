import { Cron } from 'croner';
import type { CronReader } from '../../ports/cron.ts';

/** A zone name as the IANA database writes them (`UTC`, `Europe/Berlin`, `America/Argentina/Buenos_Aires`, `Etc/GMT+5`). */
const ZONE = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+)*$/;

/** Whether the runtime's time zone data knows the zone (a bad name is a RangeError). */
function knownZone(timezone: string): boolean {
  if (!ZONE.test(timezone)) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/**
 * Cron expressions read by croner (pinned, docs/dependencies.md): five fields, or six with seconds first, never a
 * nickname (`@daily`) or a year field; day of month and day of week combined as POSIX cron does (either matches).
 * Times in a zone's daylight saving gap or overlap are what croner makes them (its `fixedTimeRule`, left at its default).
 */
export const cronerReader: CronReader = (expression, timezone) => {
  if (!knownZone(timezone)) return { ok: false, error: { path: 'timezone', message: 'is not an IANA time zone name such as Europe/Berlin' } };
  const fields = expression.trim().split(/\s+/);
  if (fields.length !== 5 && fields.length !== 6) return { ok: false, error: { path: 'cron', message: 'must have five fields, or six with seconds first' } };
  let cron: Cron;
  try {
    cron = new Cron(fields.join(' '), { timezone, paused: true, mode: '5-or-6-parts' });
  } catch (error) {
    return { ok: false, error: { path: 'cron', message: `is not a cron expression: ${error instanceof Error ? error.message.replace(/^CronPattern: /, '') : 'unreadable'}` } };
  }
  return {
    ok: true,
    value: {
      next: (after) => {
        const next = cron.nextRun(new Date(after));
        return next === null ? null : next.getTime();
      },
    },
  };
};
