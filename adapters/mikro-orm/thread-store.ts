import type { MikroORM } from '@mikro-orm/postgresql';
import type { ForkLink } from '../../domain/ledger-visibility.ts';
import type { Conversation, Thread, ThreadListItem } from '../../domain/model.ts';
import { UNARCHIVED, type AccessibleThread, type ThreadStore } from '../../ports/thread-store.ts';
import { iso, isUuid, olderThan, pageOf, prepared, runStatement } from './sql.ts';
import { CONVERSATION } from './columns.ts';

const COLUMNS = (t: string): string =>
  `${t}.id, ${t}.key, ${t}.channel, ${t}.owner, ${t}.project, ${t}.title, ${t}.fork_of, ${t}.fork_cutoff, ${t}.worktree, ${t}.created_at, ${t}.archived`;

/** The columns of a thread row, in the shape the reads answer. */
const THREAD_COLUMNS = (t: string): string =>
  `${t}.id, ${t}.key, ${t}.channel, ${t}.owner, ${t}.project, ${t}.title, ${t}.fork_of, ${t}.fork_cutoff, ${t}.worktree, ${iso(`${t}.created_at`)} as created_at, ${t}.archived`;

/**
 * (Prepared, as FIND_ROW: every request on a thread reads it.)
 * One query: the thread when the user owns it or is a member (a primary-key probe of
 * thread_members), then its ancestors, nearest first, each a primary-key lookup. The recursion
 * carries whole rows, so nothing is joined again afterwards; it follows `fork_of` and stops at a
 * missing parent or at a thread already on the path (a cycle), as the domain's chain does.
 */
const FIND_ACCESSIBLE = prepared(`
with recursive chain as (
  select ${COLUMNS('t')}, 0 as depth, array[t.id] as path
  from threads t left join thread_members m on m.thread_id = t.id and m.user_id = ?
  where t.id = ? and (t.owner = ? or m.user_id is not null)
  union all
  select ${COLUMNS('p')}, c.depth + 1, c.path || p.id
  from chain c join threads p on p.id = c.fork_of
  where p.id <> all (c.path)
)
select ${THREAD_COLUMNS('chain')} from chain order by depth`);

/** One query: the row when the user owns it or is a member (primary-key probes); no fork chain. */
const FIND_ROW = prepared(`
select ${THREAD_COLUMNS('t')}
from threads t left join thread_members m on m.thread_id = t.id and m.user_id = ?
where t.id = ? and (t.owner = ? or m.user_id is not null)`);

/**
 * FIND_ROW with the thread's latest conversation beside it (LATEST of conversation-store.ts), its columns in their
 * order (`row_to_json`: a json object keeps them, where jsonb would sort them).
 */
const FIND_ROW_WITH_LATEST = prepared(`
select ${THREAD_COLUMNS('t')},
  (select row_to_json(c) from (select ${CONVERSATION} from conversations where thread_id = t.id order by id desc limit 1) c) as latest
from threads t left join thread_members m on m.thread_id = t.id and m.user_id = ?
where t.id = ? and (t.owner = ? or m.user_id is not null)`);

/** The row and its latest conversation, from FIND_ROW_WITH_LATEST's first row. */
function withLatest(rows: (Thread & { latest: Conversation | null })[]): { row: Thread; latest: Conversation | null } | null {
  const first = rows[0];
  if (first === undefined) return null;
  const { latest, ...row } = first;
  return { row, latest };
}

/**
 * A search word's condition on a thread id (`column`): the word begins a word of the thread's title or of
 * one of its own ledger messages. Each side is a GIN index probe (migration 0023: the expressions must stay
 * exactly `to_tsvector('simple', ...)`); the `simple` configuration lower-cases and never stems. The word's
 * query text is `<word>:*` (a prefix), bound as a parameter: a word is letters and digits only
 * (domain/thread-search.ts), so it holds no tsquery operator.
 */
const matchesWord = (column: string): string => ` and ${column} in (
    select s.id from threads s where to_tsvector('simple', s.title) @@ to_tsquery('simple', ?)
    union select g.thread_id from messages g where to_tsvector('simple', g.text) @@ to_tsquery('simple', ?))`;

/**
 * One query: the newest threads the user owns, and the newest they are a member of, each an index
 * range scan cut at the page size after the filter (archived or not, and every search word), merged and
 * cut again; each with its activity (its queued directives counted on the queue's (thread_id, ordinal)
 * index, none loaded). The search only narrows what the caller may read: it never reads another thread.
 */
const listAccessible = (cursor: string, memberCursor: string, words: number) => `
select ${THREAD_COLUMNS('t')},
  coalesce(a.turn_running, false) as activity_turn_running, coalesce(a.approvals, 0)::int as activity_approvals,
  coalesce(a.questions, 0)::int as activity_questions,
  (select count(*) from directive_queue q where q.thread_id = t.id)::int as activity_queued
from threads t
left join lateral (
  select bool_or(c.turn_running) as turn_running,
    count(p.id) filter (where p.kind = 'approval') as approvals,
    count(p.id) filter (where p.kind = 'question') as questions
  from conversations c left join pending p on p.conversation_id = c.id
  where c.thread_id = t.id
) a on true
where t.id in (
  (select id from threads where owner = ? and archived = ?${cursor}${matchesWord('id').repeat(words)} order by id desc limit ?)
  union all
  (select m.thread_id from thread_members m join threads mt on mt.id = m.thread_id
    where m.user_id = ? and mt.archived = ?${memberCursor}${matchesWord('m.thread_id').repeat(words)} order by m.thread_id desc limit ?)
)
order by t.id desc limit ?`;

/** What a read of an id that is not a UUID finds: nothing, and no statement is sent. */
const NOTHING: Promise<null> = Promise.resolve(null);

const firstRow = (rows: Thread[]): Thread | null => rows[0] ?? null;

/** The thread (the first row) and its fork chain (every row, nearest first), or null. */
function withChain(rows: Thread[]): AccessibleThread | null {
  const row = rows[0];
  if (row === undefined) return null;
  const chain: ForkLink[] = rows.map(({ id, fork_of, fork_cutoff }) => ({ id, fork_of, fork_cutoff }));
  return { row, chain };
}

/** Thread rows for a user, from the `threads` and `thread_members` tables. */
export function mikroOrmThreadStore(orm: MikroORM): ThreadStore {
  return {
    // Both map their rows as the statement settles: no promise of their own (runStatement's `map`).
    findAccessible(userId, threadId) {
      if (!isUuid(threadId)) return NOTHING;
      return runStatement(orm, FIND_ACCESSIBLE, [userId, threadId, userId], withChain);
    },

    findRowWithLatest(userId, threadId) {
      if (!isUuid(threadId)) return NOTHING;
      return runStatement<Thread & { latest: Conversation | null }, { row: Thread; latest: Conversation | null } | null>(
        orm, FIND_ROW_WITH_LATEST, [userId, threadId, userId], withLatest);
    },

    findRow(userId, threadId) {
      if (!isUuid(threadId)) return NOTHING;
      return runStatement(orm, FIND_ROW, [userId, threadId, userId], firstRow);
    },

    async exists(threadId) {
      if (!isUuid(threadId)) return false;
      return (await runStatement<{ id: string }>(orm, 'select id from threads where id = ?', [threadId])).length === 1;
    },

    async listAccessible(userId, page, filter = UNARCHIVED) {
      const owned = olderThan('id', page.before);
      const member = olderThan('m.thread_id', page.before);
      const take = page.limit + 1;
      // Each word twice: its title probe and its ledger probe.
      const words = filter.words.flatMap((word) => [`${word}:*`, `${word}:*`]);
      type Row = Thread & { activity_turn_running: boolean; activity_approvals: number; activity_questions: number; activity_queued: number };
      const rows = await runStatement<Row>(orm, listAccessible(owned.sql, member.sql, filter.words.length), [
        userId, filter.archived, ...owned.params, ...words, take, userId, filter.archived, ...member.params, ...words, take, take,
      ]);
      const items = rows.map(({ activity_turn_running, activity_approvals, activity_questions, activity_queued, ...thread }): ThreadListItem => ({
        ...thread,
        activity: { turn_running: activity_turn_running, approvals: activity_approvals, questions: activity_questions, queued: activity_queued },
      }));
      return pageOf(items, page.limit);
    },
  };
}
