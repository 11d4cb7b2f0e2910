import type { MikroORM } from '@mikro-orm/postgresql';
import type { Message } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { NewRewind, PendingRestore, RewindOutcome, RewindWrites, ThreadRun } from '../../ports/rewind-writes.ts';
import { MESSAGE_OF } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';
import { transaction, type Statement } from './transaction.ts';

/** A thread's runs, oldest first (ThreadRun). */
export const THREAD_RUNS = `
select r.id, r.conversation_id, r.message_id, r.rewound, r.status <> 'running' as ended from runs r
join conversations c on c.id = r.conversation_id
where c.thread_id = ? order by r.id`;

/** Rewinds of a thread's runs (`runs.rewound`, `messages.rewound`, the `thread_rewinds` journal), each one transaction. */
export function mikroOrmRewindWrites(orm: MikroORM): RewindWrites {
  return {
    threadRuns: (threadId) => runStatement<ThreadRun>(orm, THREAD_RUNS, [threadId]),
    rewind: (rewind) => transaction(orm, (sql) => rewindIn(sql, rewind)),
    async pendingRestore(threadId) {
      const [row] = await runStatement<PendingRestore>(orm, 'select run_id, "commit" from thread_rewinds where thread_id = ?', [threadId]);
      return row ?? null;
    },
    async restored(threadId, commit) {
      await runStatement(orm, 'delete from thread_rewinds where thread_id = ? and "commit" = ?', [threadId, commit]);
    },
  };
}

const marks = (values: readonly unknown[]): string => values.map(() => '?').join(', ');

/**
 * The thread's row locked first, then its conversations (the order every directive and move takes, so no
 * deadlock): a directive waits here, and finds the runs marked, the sessions dropped and the journal written.
 */
async function rewindIn(sql: Statement, rewind: NewRewind): Promise<RewindOutcome> {
  const [thread] = await sql('select id from threads where id = ? for no key update', [rewind.thread_id]);
  if (thread === undefined) throw new Error(`No thread ${rewind.thread_id}`);
  const conversations = await sql<{ turn_running: boolean }>('select turn_running from conversations where thread_id = ? order by id for update', [rewind.thread_id]);
  if (conversations.some((c) => c.turn_running)) return { kind: 'turn_running' };
  const [queued] = await sql('select 1 from directive_queue where thread_id = ? limit 1', [rewind.thread_id]);
  if (queued !== undefined) return { kind: 'queue_not_empty' };
  if (!isUuid(rewind.run_id)) return { kind: 'not_found' };
  const runs = await sql<ThreadRun>(THREAD_RUNS, [rewind.thread_id]);
  const first = runs.find((run) => run.id === rewind.run_id);
  if (first === undefined) return { kind: 'not_found' };
  if (first.rewound) return { kind: 'rewound_already' };
  const taken = runs.filter((run) => run.id >= first.id && !run.rewound);
  const ids = taken.map((run) => run.id);
  const prompts = taken.map((run) => run.message_id).filter((id) => id !== null);
  const conversationIds = [...new Set(taken.map((run) => run.conversation_id))];
  await sql(`update runs set rewound = true where id in (${marks(ids)})`, ids);
  await sql(`update messages set rewound = true where thread_id = ? and not rewound and (id >= ?${prompts.length === 0 ? '' : ` or id in (${marks(prompts)})`})`,
    [rewind.thread_id, first.id, ...prompts]);
  await sql(`update conversations set session_id = null where id in (${marks(conversationIds)})`, conversationIds);
  if (rewind.restore !== null) {
    await sql(`insert into thread_rewinds (thread_id, run_id, "commit", created_at) values (?, ?, ?, now())
      on conflict (thread_id) do update set run_id = excluded.run_id, "commit" = excluded."commit", created_at = excluded.created_at`,
    [rewind.thread_id, rewind.run_id, rewind.restore]);
  }
  const [note] = await sql<Message>(`insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, 'system', ?, null, ?)
    returning ${MESSAGE_OF('messages')}`, [rewind.note.id, rewind.thread_id, rewind.note.text, uuid7Time(rewind.note.id)]);
  return { kind: 'rewound', runs: ids, note: note! };
}
