import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import { CONSOLE_CHANNEL, type Conversation, type Thread, type Worktree } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { ConsoleThreads, NewConsoleThread } from '../../ports/console-threads.ts';
import { CONVERSATION, THREAD } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';
import { insertConversation } from './write-helpers.ts';

/** Console threads by key in `threads`: one per (owner, key), whatever the race, by the unique index. */
export function mikroOrmConsoleThreads(orm: MikroORM): ConsoleThreads {
  return {
    findByKey: async (owner, key) =>
      (await runStatement<Thread>(orm, `select ${THREAD} from threads where owner = ? and key = ?`, [owner, key]))[0] ?? null,

    createConsoleThread: (input) => transaction(orm, (sql) => createConsoleThread(sql, input)),

    async setWorktree(threadId, worktree) {
      if (!isUuid(threadId)) return null;
      // The update when none is recorded. When it finds one recorded (having waited for a concurrent record to
      // commit), a second statement reads it: a single statement's snapshot would still see the row unrecorded.
      const [updated] = await runStatement<{ worktree: Worktree | null }>(orm,
        'update threads set worktree = ?::jsonb where id = ? and worktree is null returning worktree',
        [JSON.stringify(worktree), threadId]);
      if (updated !== undefined) return updated.worktree;
      const [row] = await runStatement<{ worktree: Worktree | null }>(orm, 'select worktree from threads where id = ?', [threadId]);
      return row?.worktree ?? null;
    },
  };
}

/** The race on the unique (owner, key) index: whoever inserts second waits, then answers the first's rows. */
async function createConsoleThread(sql: Statement, input: NewConsoleThread): Promise<{ thread: Thread; conversation: Conversation }> {
  const id = uuidv7();
  const [created] = await sql<Thread>(`
    insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
    values (?, ?, ?, ?, ?, ?, null, null, ?)
    on conflict (owner, key) where key is not null do nothing returning ${THREAD}`,
  [id, input.key, input.channel ?? CONSOLE_CHANNEL, input.owner, input.project, input.title, uuid7Time(id)]);
  // The existing row is locked, so two callers that both find it without a conversation add only one.
  const thread = created ?? (await sql<Thread>(`select ${THREAD} from threads where owner = ? and key = ? for update`, [input.owner, input.key]))[0]!;
  const [first] = created !== undefined ? [] : await sql<Conversation>(
    `select ${CONVERSATION} from conversations where thread_id = ? order by id limit 1`, [thread.id]);
  if (first !== undefined) return { thread, conversation: first };
  // A console conversation lives at its thread; a chat thread's where the message that opened it was posted.
  return { thread, conversation: await insertConversation(sql, thread, { ...input.conversation, address: input.conversation.address ?? null }) };
}
