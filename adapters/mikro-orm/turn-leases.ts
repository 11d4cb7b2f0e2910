import type { MikroORM } from '@mikro-orm/postgresql';
import type { Run } from '../../domain/model.ts';
import type { ExpiredTurn, TurnLeases } from '../../ports/turn-leases.ts';
import { RUN } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';

/**
 * Turns as leases in the `conversations` table (`turn_run_id`, `turn_holder`, `turn_expires_at`):
 * release, renewal, the sweepers' exclusive claim of lapsed turns, and the running turn of a thread.
 * Times are the database's `now()`, so instances need no agreeing clocks.
 */
export function mikroOrmTurnLeases(orm: MikroORM): TurnLeases {
  return {
    async releaseTurn(runId) {
      if (!isUuid(runId)) return;
      // The run's prompt, if it never reached its agent, goes with its turn: nothing starts it again.
      await runStatement(orm, `with unsent as (delete from unsent_prompts where run_id = ?)
        update conversations set turn_running = false, turn_run_id = null, turn_holder = null, turn_expires_at = null
        where turn_run_id = ?`, [runId, runId]);
    },

    async renewTurns(holder, runIds, ms) {
      const ids = runIds.filter(isUuid);
      if (ids.length === 0) return [];
      const rows = await runStatement<{ turn_run_id: string }>(orm, `
        update conversations set turn_expires_at = now() + make_interval(secs => ?)
        where turn_running and turn_holder = ? and turn_run_id in (${ids.map(() => '?').join(', ')}) returning turn_run_id`,
      [ms / 1000, holder, ...ids]);
      return rows.map((row) => row.turn_run_id);
    },

    async claimExpiredTurn(lease): Promise<ExpiredTurn | null> {
      for (;;) {
        // Skip locked: two sweepers never wait on, or take, the same turn. A turn with no lease (left by an
        // earlier version, or a directive whose run was never written) counts as lapsed.
        const [claimed] = await runStatement<{ thread_id: string; run_id: string | null; conversation_id: string }>(orm, `
          with expired as (
            select id from conversations
            where turn_running and (turn_expires_at is null or turn_expires_at < now())
            order by turn_expires_at nulls first limit 1 for update skip locked)
          update conversations c set turn_holder = ?, turn_expires_at = now() + make_interval(secs => ?)
          from expired where c.id = expired.id
          returning c.thread_id, c.turn_run_id as run_id, c.id as conversation_id`, [lease.holder, lease.ms / 1000]);
        if (claimed === undefined) return null;
        // A turn claimed before leases existed names no run: its conversation's latest running run is the one.
        const [run] = await runStatement<Run>(orm, claimed.run_id !== null
          ? `select ${RUN} from runs where id = ?`
          : `select ${RUN} from runs where conversation_id = ? order by (status = 'running') desc, id desc limit 1`,
        [claimed.run_id ?? claimed.conversation_id]);
        if (run === undefined) {
          // Nothing to end: the turn is simply freed, and the next lapsed one looked for.
          await runStatement(orm, `update conversations set turn_running = false, turn_run_id = null, turn_holder = null, turn_expires_at = null where id = ?`, [claimed.conversation_id]);
          continue;
        }
        if (claimed.run_id === null) await runStatement(orm, 'update conversations set turn_run_id = ? where id = ?', [run.id, claimed.conversation_id]);
        return { thread_id: claimed.thread_id, run };
      }
    },

    async runningTurn(threadId) {
      if (!isUuid(threadId)) return null;
      const [turn] = await runStatement<{ run_id: string; conversation_id: string; holder: string | null }>(orm, `
        select turn_run_id as run_id, id as conversation_id, turn_holder as holder from conversations
        where thread_id = ? and turn_running and turn_run_id is not null order by id desc limit 1`, [threadId]);
      return turn ?? null;
    },
  };
}
