import type { MikroORM } from '@mikro-orm/postgresql';
import { uuidv7 } from 'uuidv7';
import type { Message, ModelMessage, Run } from '../../domain/model.ts';
import { uuid7Time } from '../../domain/vocabulary.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import { RUN } from './columns.ts';
import { isUuid, prepared, runStatement } from './sql.ts';

/** A run's records, written on every turn: prepared. */
const RECORDS = {
  setSession: prepared('update conversations set session_id = ? where id = ?'),
  sessionOf: prepared('select session_id from conversations where id = ?'),
  message: prepared('insert into messages (id, thread_id, role, text, artifact_id, created_at) values (?, ?, ?, ?, ?, ?)'),
  modelMessage: prepared('insert into model_messages (id, run_id, role, content, created_at) values (?, ?, ?, ?, ?)'),
  // One statement, so one transaction: the run ends and its leftovers go together; an ended run stays as it is.
  finish: prepared(`
        with r as (update runs set status = ?, error = ?, ended_at = now() where id = ? and status = 'running' returning *),
        p as (delete from pending where run_id = ? and exists (select 1 from r)),
        a as (delete from pending_answers where run_id = ? and exists (select 1 from r))
        select ${RUN} from r
        union all select ${RUN} from runs where id = ? and not exists (select 1 from r)`),
};

/** What a run records, each one statement: its session, ledger and model messages, and its end. */
export function mikroOrmRunRecords(orm: MikroORM): RunRecords {
  return {
    async setSession(conversationId, sessionId) {
      if (isUuid(conversationId)) await runStatement(orm, RECORDS.setSession, [sessionId, conversationId]);
    },

    async sessionOf(conversationId) {
      if (!isUuid(conversationId)) return null;
      return (await runStatement<{ session_id: string | null }>(orm, RECORDS.sessionOf, [conversationId]))[0]?.session_id ?? null;
    },

    async appendMessage(threadId, fields) {
      const id = uuidv7();
      const message: Message = { id, role: fields.role, text: fields.text, artifact_id: fields.artifact_id, created_at: uuid7Time(id), origin: null };
      await runStatement(orm, RECORDS.message,
        [id, threadId, message.role, message.text, message.artifact_id, message.created_at]);
      return message;
    },

    async appendModelMessage(runId, fields) {
      const id = uuidv7();
      const message: ModelMessage = { id, run_id: runId, role: fields.role, content: fields.content, created_at: uuid7Time(id) };
      await runStatement(orm, RECORDS.modelMessage,
        [id, runId, message.role, message.content, message.created_at]);
      return message;
    },

    async finishRun(runId, status, error) {
      const [run] = isUuid(runId) ? await runStatement<Run>(orm, RECORDS.finish, [status, error, runId, runId, runId, runId]) : [];
      if (run === undefined) throw new Error(`No run ${runId}`);
      return run;
    },
  };
}
