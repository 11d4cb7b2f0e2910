import type { MikroORM } from '@mikro-orm/postgresql';
import type { Message, Page } from '../../domain/model.ts';
import type { LedgerEntry, LedgerStore } from '../../ports/ledger-store.ts';
import { MESSAGE_OF } from './columns.ts';
import { runStatement } from './sql.ts';

/** A ledger row as the page's statement answers it: the message, and its artifact's title and provider (null when none). */
type LedgerRow = Message & { app_title: string | null; app_provider: string | null };

/**
 * The page cut from rows fetched with `limit + 1` (as `pageOf`), each message built field by field,
 * in the answer's order, with `app` only when it references an artifact: an object rest per row cost
 * more than the rest of the mapping, and a message without `app` is then answered as it is built here.
 */
function entriesPage(rows: readonly LedgerRow[], limit: number): Page<LedgerEntry> {
  const count = Math.min(rows.length, limit);
  const items: LedgerEntry[] = [];
  for (let i = 0; i < count; i++) {
    const row = rows[i]!;
    items.push(row.app_title === null
      ? { id: row.id, role: row.role, text: row.text, artifact_id: row.artifact_id, created_at: row.created_at, origin: row.origin }
      : { id: row.id, role: row.role, text: row.text, artifact_id: row.artifact_id, created_at: row.created_at, origin: row.origin, app: { title: row.app_title, provider_name: row.app_provider ?? '' } });
  }
  return { items, next: rows.length > limit ? items[count - 1]!.id : null };
}

/**
 * The chat ledger. A page is one query: per segment, a backward range scan of (thread_id, id) cut at
 * the page size, all merged newest first and cut again, so the work is bounded by segments x limit
 * whatever the ledgers' length.
 */
export function mikroOrmLedgerStore(orm: MikroORM): LedgerStore {
  return {
    page(segments, page, options) {
      if (segments.length === 0) return Promise.resolve({ items: [], next: null });
      const take = page.limit + 1;
      const parts: string[] = [];
      const params: unknown[] = [];
      for (const segment of segments) {
        let where = options?.live === true ? 'thread_id = ? and not rewound' : 'thread_id = ?';
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
        parts.push(`(select id, role, text, artifact_id, created_at, origin from messages where ${where} order by id desc limit ?)`);
      }
      params.push(take);
      // The page is cut first, then each of its (at most limit + 1) references is joined by primary key.
      const sql = `select ${MESSAGE_OF('m')},
          a.title as app_title, i.provider_name as app_provider
        from (select * from (${parts.join(' union all ')}) u order by id desc limit ?) m
        left join artifacts a on a.id = m.artifact_id
        left join installations i on i.id = a.installation
        order by m.id desc`;
      return runStatement(orm, sql, params, (rows: LedgerRow[]) => entriesPage(rows, page.limit));
    },
  };
}
