import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { WireEvent } from '../../domain/events.ts';
import type { DirectiveOrigin, Message } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { QueueActor, QueueEdits, QueuedDirective } from '../../ports/queue-edits.ts';
import { APPEND } from './event-log.ts';
import { iso, isUuid, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';
import { retriedOnSeqRace } from './write-helpers.ts';

/** A queued item as the reads answer it, its position its rank in the thread's queue. */
export const ITEM = `id, message_id, text, author, (row_number() over (order by ordinal))::int as position, ${iso('created_at')} as created_at, origin`;
const QUEUE_OF = `select ${ITEM} from directive_queue where thread_id = ? order by ordinal`;

/** Writes a queued directive inside a transaction holding the thread's lock: its ledger message, its row, its `queued` event. */
export async function enqueueIn(
  sql: Statement,
  fields: {
    thread_id: string; conversation_id: string; text: string; author: string; first: boolean; directory: string | null; permission_mode: string | null; origin: DirectiveOrigin | null;
  },
): Promise<{ item: QueuedDirective; event: WireEvent }> {
  const messageId = uuidv7();
  const id = uuidv7();
  const origin = fields.origin === null ? null : JSON.stringify(fields.origin);
  await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at, origin) values (?, ?, 'user', ?, null, ?, ?::jsonb)`,
    [messageId, fields.thread_id, fields.text, uuid7Time(messageId), origin]);
  // An interrupt goes below the smallest ordinal (it runs first), anything else above the largest.
  await sql(`insert into directive_queue (id, thread_id, conversation_id, message_id, text, author, ordinal, directory, permission_mode, created_at, origin)
    select ?, ?, ?, ?, ?, ?, coalesce(${fields.first ? 'min(ordinal) - 1' : 'max(ordinal) + 1'}, 1), ?, ?, ?, ?::jsonb from directive_queue where thread_id = ?`,
  [id, fields.thread_id, fields.conversation_id, messageId, fields.text, fields.author, fields.directory, fields.permission_mode, uuid7Time(id), origin, fields.thread_id]);
  const item = (await sql<QueuedDirective>(QUEUE_OF, [fields.thread_id])).find((row) => row.id === id)!;
  const [event] = await sql<WireEvent>(APPEND, [fields.thread_id, 'queued', JSON.stringify(item), fields.thread_id]);
  return { item, event: event! };
}

/** The queue's edits in `directive_queue`; every write is one transaction that takes the thread's row lock first. */
export function mikroOrmQueueEdits(orm: MikroORM): QueueEdits {
  /** Locks the thread's row and the item; answers the item when it is queued there and `by` may change it. */
  async function changeable(sql: Statement, threadId: string, itemId: string, by: QueueActor) {
    await sql('select id from threads where id = ? for update', [threadId]);
    const [item] = await sql<{ id: string; author: string; message_id: string }>(
      'select id, author, message_id from directive_queue where id = ? and thread_id = ? for update', [itemId, threadId]);
    if (item === undefined) return { kind: 'gone' } as const;
    if (!by.owner && item.author !== by.user) return { kind: 'forbidden' } as const;
    return item;
  }

  return {
    async queued(threadId) {
      return isUuid(threadId) ? runStatement<QueuedDirective>(orm, QUEUE_OF, [threadId]) : [];
    },

    editQueued: (threadId, itemId, by, text) => retriedOnSeqRace(() =>
      transaction(orm, async (sql) => {
        if (!isUuid(threadId) || !isUuid(itemId)) return { kind: 'gone' } as const;
        const found = await changeable(sql, threadId, itemId, by);
        if ('kind' in found) return found;
        await sql('update directive_queue set text = ? where id = ?', [text, itemId]);
        await sql('update messages set text = ? where id = ?', [text, found.message_id]);
        const item = (await sql<QueuedDirective>(QUEUE_OF, [threadId])).find((row) => row.id === itemId)!;
        const events = await sql<WireEvent>(APPEND, [threadId, 'queued', JSON.stringify(item), threadId]);
        // As supersededData (domain/events.ts) says, in one statement: the thread's earlier events of this item lose their text.
        await sql(`update events set data = (data - 'text') || jsonb_build_object('superseded_by', ?::int)
          where thread_id = ? and type = 'queued' and data ->> 'id' = ? and data ->> 'text' is not null and seq < ?`,
        [events[0]!.seq, threadId, itemId, events[0]!.seq]);
        return { kind: 'done', item, events };
      })),

    revokeQueued: (threadId, itemId, by, line) => retriedOnSeqRace(() =>
      transaction(orm, async (sql) => {
        if (!isUuid(threadId) || !isUuid(itemId)) return { kind: 'gone' } as const;
        const found = await changeable(sql, threadId, itemId, by);
        if ('kind' in found) return found;
        await sql('delete from directive_queue where id = ?', [itemId]);
        const id = uuidv7();
        const message: Message = { id, role: 'system', text: line, artifact_id: null, created_at: uuid7Time(id), origin: null };
        await sql(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'system', ?, null, ?)`, [id, threadId, line, message.created_at]);
        const events = [
          ...await sql<WireEvent>(APPEND, [threadId, 'dequeued', JSON.stringify({ id: itemId, run_id: null, withdrawn: true }), threadId]),
          ...await sql<WireEvent>(APPEND, [threadId, 'message', JSON.stringify({ run_id: null, message }), threadId]),
        ];
        return { kind: 'done', events };
      })),
  };
}
