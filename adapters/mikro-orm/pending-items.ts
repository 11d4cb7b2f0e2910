import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { Pending } from '../../domain/model.ts';
import { checkPendingAnswers } from '../../domain/pending-answers.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import type { PendingItems } from '../../ports/pending-items.ts';
import { PENDING_OF } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';
import { transaction } from './transaction.ts';

/** A run's approvals and questions in `pending` and `pending_answers`; an answer is one transaction that locks its items. */
export function mikroOrmPendingItems(orm: MikroORM): PendingItems {
  return {
    async addPending(fields) {
      const pending: Pending = { id: uuidv7(), ...fields };
      // Options as JSON text: an array bound as a value would be expanded into a list.
      await runStatement(orm, 'insert into pending (id, kind, conversation_id, run_id, title, options, tool_call) values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb)',
        [pending.id, pending.kind, pending.conversation_id, pending.run_id, pending.title, JSON.stringify(pending.options),
          pending.tool_call === null ? null : JSON.stringify(pending.tool_call)]);
      return pending;
    },

    answerPending: (threadId, answers) =>
      transaction(orm, async (sql) => {
        const ids = [...new Set(answers.map((answer) => answer.id))].filter(isUuid);
        // Locked: of two concurrent answers to one item, the second waits, then finds it gone.
        const rows = ids.length === 0 || !isUuid(threadId) ? [] : await sql<Pending>(`
          select ${PENDING_OF('p')}
          from pending p join conversations c on c.id = p.conversation_id
          where c.thread_id = ? and p.id in (${ids.map(() => '?').join(', ')}) for update of p`, [threadId, ...ids]);
        const issues = checkPendingAnswers(new Map(rows.map((row) => [row.id, row])), answers);
        if (issues.length > 0) return { ok: false, issues };
        if (ids.length > 0) await sql(`delete from pending where id in (${ids.map(() => '?').join(', ')})`, ids);
        const runOf = new Map(rows.map((row) => [row.id, row.run_id]));
        for (const answer of answers) {
          const runId = runOf.get(answer.id);
          if (runId) await sql('insert into pending_answers (pending_id, run_id, answer) values (?, ?, ?::jsonb) on conflict do nothing', [answer.id, runId, JSON.stringify(answer)]);
        }
        return { ok: true };
      }),

    async pendingAnswers(pendingIds) {
      const ids = pendingIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await runStatement<{ answer: PendingAnswer }>(orm,
        `select answer from pending_answers where pending_id in (${ids.map(() => '?').join(', ')})`, ids);
      return rows.map((row) => row.answer);
    },
  };
}
