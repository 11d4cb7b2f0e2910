import { core } from '../packages.ts';
import { ThreadSchema } from './threads.ts';

/** Loaded with `require`, not `import` (see ../packages.ts). */
const { defineEntity, p } = core;

/**
 * `directives`: the answer each directive got, by the client's `message_id` on its thread, and who
 * sent it (null for rows from before migration 0015-directive-authors). The primary key is what makes a retried or
 * concurrent duplicate directive find the first answer; the author, whether it is theirs to find.
 */
export const DirectiveSchema = defineEntity({
  name: 'Directive',
  tableName: 'directives',
  properties: {
    thread_id: p.manyToOne(ThreadSchema).primary().mapToPk().fieldName('thread_id'),
    message_id: p.text().primary(),
    answer: p.json<Record<string, unknown>>(),
    author: p.text().nullable(),
  },
});

/**
 * `events`: a thread's live events with their per-thread `seq`. The primary key (thread_id, seq)
 * both numbers them (a duplicate seq is refused) and serves replay as one index range scan.
 * `type` is plain text, not a check: new event types need no migration.
 */
export const EventSchema = defineEntity({
  name: 'Event',
  tableName: 'events',
  properties: {
    thread_id: p.manyToOne(ThreadSchema).primary().mapToPk().fieldName('thread_id'),
    seq: p.integer().primary(),
    type: p.text(),
    at: p.datetime(),
    data: p.json<Record<string, unknown>>(),
    /** The append's key (EventLog.append's `key`), unique on the thread; null for most (migration 0019-event-keys). */
    key: p.text().nullable(),
  },
  uniques: [{ name: 'events_thread_id_key_unique', properties: ['thread_id', 'key'] }],
});
