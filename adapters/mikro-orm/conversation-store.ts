import type { MikroORM } from '@mikro-orm/postgresql';
import type { Conversation, ModelMessage, Pending, Run } from '../../domain/model.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import { CONVERSATION, CONVERSATION_OF, MODEL_MESSAGE_OF, PENDING_OF, RUN_OF } from './columns.ts';
import { isUuid, olderThan, pageOf, prepared, runStatement } from './sql.ts';

/**
 * A row of a child page read from its parent: `parent` is always set when the parent is under the
 * thread, and the child columns are null when the page is empty. No row at all: not under the thread.
 */
type Joined<T> = { parent: string } & { [K in keyof T]: T[K] | null };

/** Rows of a LEFT JOIN from the parent: null when the parent is not there, else the page. */
function joinedPage<T extends { readonly id: string }>(rows: readonly Joined<T>[], limit: number) {
  if (rows.length === 0) return null;
  const items = rows.filter((row) => row.id !== null).map(({ parent: _, ...child }) => child as unknown as T);
  return pageOf(items, limit);
}

/** A thread's conversations, and its latest: read on every turn (prepared). */
const BY_THREAD = prepared(`select ${CONVERSATION} from conversations where thread_id = ? order by id`);
const LATEST = prepared(`select ${CONVERSATION} from conversations where thread_id = ? order by id desc limit 1`);

const RUNS_PAGE = (cursor: string) => `
select c.id as parent, ${RUN_OF('r')}
from conversations c
left join lateral (select * from runs where conversation_id = c.id${cursor} order by id desc limit ?) r on true
where c.id = ? and c.thread_id = ?
order by r.id desc`;

const MODEL_MESSAGES_PAGE = (cursor: string) => `
select r.id as parent, ${MODEL_MESSAGE_OF('mm')}
from runs r
join conversations c on c.id = r.conversation_id and c.thread_id = ?
left join lateral (select * from model_messages where run_id = r.id${cursor} order by id desc limit ?) mm on true
where r.id = ?
order by mm.id desc`;

/** Conversations, runs, model messages and pending items; every read is one query, scoped to its thread. */
export function mikroOrmConversationStore(orm: MikroORM): ConversationStore {
  return {
    async findForUser(userId, conversationId) {
      if (!isUuid(conversationId)) return null;
      const [row] = await runStatement<Conversation>(orm, `
        select ${CONVERSATION_OF('c')}
        from conversations c join threads t on t.id = c.thread_id
        left join thread_members m on m.thread_id = t.id and m.user_id = ?
        where c.id = ? and (t.owner = ? or m.user_id is not null)`, [userId, conversationId, userId]);
      return row ?? null;
    },

    async listByThread(threadId) {
      if (!isUuid(threadId)) return [];
      return runStatement<Conversation>(orm, BY_THREAD, [threadId]);
    },

    async livingAt(address) {
      const rows = await runStatement<Conversation>(orm, `
        select ${CONVERSATION}
        from conversations where address = ?::jsonb and moved_to is null limit 1`, [JSON.stringify({ channel: address.channel, id: address.id })]);
      return rows[0] ?? null;
    },

    async livingOn(channel) {
      return runStatement<{ address: string; title: string }>(orm, `
        select c.address->>'id' as address, t.title
        from conversations c join threads t on t.id = c.thread_id
        where c.address->>'channel' = ? and c.moved_to is null order by 1`, [channel]);
    },

    async latestByThread(threadId) {
      if (!isUuid(threadId)) return null;
      const rows = await runStatement<Conversation>(orm, LATEST, [threadId]);
      return rows[0] ?? null;
    },

    async runsPage(threadId, conversationId, page) {
      if (!isUuid(threadId) || !isUuid(conversationId)) return null;
      const cursor = olderThan('id', page.before);
      const rows = await runStatement<Joined<Run>>(orm, RUNS_PAGE(cursor.sql), [...cursor.params, page.limit + 1, conversationId, threadId]);
      return joinedPage(rows, page.limit);
    },

    async modelMessagesPage(threadId, runId, page) {
      if (!isUuid(threadId) || !isUuid(runId)) return null;
      const cursor = olderThan('id', page.before);
      const rows = await runStatement<Joined<ModelMessage>>(orm, MODEL_MESSAGES_PAGE(cursor.sql), [threadId, ...cursor.params, page.limit + 1, runId]);
      return joinedPage(rows, page.limit);
    },

    async pendingByThread(threadId) {
      if (!isUuid(threadId)) return [];
      return runStatement<Pending>(orm, `
        select ${PENDING_OF('p')}
        from conversations c join pending p on p.conversation_id = c.id
        where c.thread_id = ? order by p.id`, [threadId]);
    },
  };
}
