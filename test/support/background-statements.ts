/**
 * Statements of the service's own periodic looks (the scheduler's due schedules and the webhook sender's due
 * deliveries, every second), sent beside any request or turn: tests that count a request's statements leave
 * them out. (A stored event's webhook deliveries are written by its own statement's trigger: no statement of theirs.)
 */
const BACKGROUND_TABLES = /\b(schedules|schedule_fires|webhooks|webhook_deliveries)\b/;

/** Whether a statement is one of the periodic looks', not the work being counted. */
export const isBackgroundStatement = (sql: string): boolean => BACKGROUND_TABLES.test(sql);
