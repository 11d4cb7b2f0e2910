import type { MikroORM } from '@mikro-orm/postgresql';
import { isInLedger } from '../../domain/ledger-visibility.ts';
import { CONSOLE_CHANNEL, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import { runOfMessage } from '../../domain/worktree.ts';
import type { ForkOutcome, ForkWrites, NewFork } from '../../ports/fork-writes.ts';
import type { ThreadRun } from '../../ports/rewind-writes.ts';
import { THREAD } from './columns.ts';
import { THREAD_RUNS } from './rewind-writes.ts';
import { isUuid } from './sql.ts';
import { transaction } from './transaction.ts';
import { insertConversation } from './write-helpers.ts';

/** Forks from a message, each one transaction. */
export function mikroOrmForkWrites(orm: MikroORM): ForkWrites {
  return { createFork: (fork) => createFork(orm, fork) };
}

/** The cutoff's thread read (a message is never moved nor deleted), checked against the visible ledger, its run ended; then the thread and its conversation. */
function createFork(orm: MikroORM, fork: NewFork): Promise<ForkOutcome> {
  return transaction(orm, async (sql) => {
    const [message] = isUuid(fork.cutoff) ? await sql<{ id: string; thread_id: string }>('select id, thread_id from messages where id = ?', [fork.cutoff]) : [];
    if (message === undefined || !isInLedger(fork.visible, message)) return { kind: 'not_in_ledger' };
    // Its replies and files are final only once its run ended. The cutoff's thread row held (shared): no directive,
    // hand-over or queued start of that thread (each takes it to write) starts a run until this commits.
    await sql('select id from threads where id = ? for share', [message.thread_id]);
    const [queued] = await sql('select 1 from directive_queue where thread_id = ? and message_id = ? limit 1', [message.thread_id, message.id]);
    if (queued !== undefined) return { kind: 'queue_not_empty' };
    const run = runOfMessage(await sql<ThreadRun>(THREAD_RUNS, [message.thread_id]), message.id);
    if (run !== null && !run.ended) return { kind: 'turn_running' };
    const [thread] = await sql<Thread>(`
      insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
      values (?, null, ?, ?, ?, ?, ?, ?, ?) returning ${THREAD}`,
    [fork.id, CONSOLE_CHANNEL, fork.owner, fork.project, fork.title, fork.source_thread_id, message.id, uuid7Time(fork.id)]) as [Thread];
    const conversation = await insertConversation(sql, thread, { ...fork.conversation, address: null }, fork.conversation.id);
    return { kind: 'forked', thread, conversation };
  });
}
