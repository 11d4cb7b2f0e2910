/**
 * A cron expression read in a time zone (contract section 12): five fields, or six with seconds first, and an
 * IANA zone name. The times it names are asked one at a time, each the first strictly after an instant.
 */
export interface CronTimes {
  /** The first time strictly after `after` (ms since the epoch) that the expression names; null when none is left. */
  next(after: number): number | null;
}

/** Reads an expression in a zone: its times, or why not (said of the field at fault, for a 422). */
export type CronReader = (
  expression: string,
  timezone: string,
) => { readonly ok: true; readonly value: CronTimes } | { readonly ok: false; readonly error: { readonly path: 'cron' | 'timezone'; readonly message: string } };
