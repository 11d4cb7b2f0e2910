import type { MikroORM } from '@mikro-orm/postgresql';
import { isInLedger } from '../../domain/ledger-visibility.ts';
import { CONSOLE_CHANNEL, type Thread } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { ForkOutcome, ForkWrites, NewFork } from '../../ports/fork-writes.ts';
import { THREAD } from './columns.ts';
import { isUuid } from './sql.ts';
import { transaction } from './transaction.ts';
import { insertConversation } from './write-helpers.ts';

/** Forks from a message, each one transaction. */
export function mikroOrmForkWrites(orm: MikroORM): ForkWrites {
  return { createFork: (fork) => createFork(orm, fork) };
}

/** The cutoff's thread read (a message is never moved nor deleted), checked against the visible ledger; then the thread and its conversation. */
function createFork(orm: MikroORM, fork: NewFork): Promise<ForkOutcome> {
  return transaction(orm, async (sql) => {
    const [message] = isUuid(fork.cutoff) ? await sql<{ id: string; thread_id: string }>('select id, thread_id from messages where id = ?', [fork.cutoff]) : [];
    if (message === undefined || !isInLedger(fork.visible, message)) return { kind: 'not_in_ledger' };
    const [thread] = await sql<Thread>(`
      insert into threads (id, key, channel, owner, project, title, fork_of, fork_cutoff, created_at)
      values (?, null, ?, ?, ?, ?, ?, ?, ?) returning ${THREAD}`,
    [fork.id, CONSOLE_CHANNEL, fork.owner, fork.project, fork.title, fork.source_thread_id, message.id, uuid7Time(fork.id)]) as [Thread];
    const conversation = await insertConversation(sql, thread, { ...fork.conversation, address: null }, fork.conversation.id);
    return { kind: 'forked', thread, conversation };
  });
}
