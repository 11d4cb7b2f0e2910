import type { MikroORM } from '@mikro-orm/postgresql';
import type { Message } from '../../domain/model.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import { iso, pageOf, select } from './sql.ts';

/**
 * The chat ledger. A page is one query: per segment, a backward range scan of (thread_id, id) cut at
 * the page size, all merged newest first and cut again, so the work is bounded by segments x limit
 * whatever the ledgers' length.
 */
export function mikroOrmLedgerStore(orm: MikroORM): LedgerStore {
  return {
    async page(segments, page) {
      if (segments.length === 0) return { items: [], next: null };
      const take = page.limit + 1;
      const parts: string[] = [];
      const params: unknown[] = [];
      for (const segment of segments) {
        let where = 'thread_id = ?';
        params.push(segment.thread_id);
        if (segment.upTo !== null) {
          where += ' and id <= ?';
          params.push(segment.upTo);
        }
        if (page.before !== null) {
          where += ' and id < ?';
          params.push(page.before);
        }
        params.push(take);
        parts.push(`(select id, role, text, artifact_id, created_at from messages where ${where} order by id desc limit ?)`);
      }
      params.push(take);
      const sql = `select id, role, text, artifact_id, ${iso('created_at')} as created_at
        from (${parts.join(' union all ')}) m order by id desc limit ?`;
      return pageOf(await select<Message>(orm, sql, params), page.limit);
    },
  };
}
