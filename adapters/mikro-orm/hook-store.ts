import type { MikroORM } from '@mikro-orm/postgresql';
import type { Hook, HookStore, StoredHook } from '../../ports/hook-store.ts';
import { isUuid, iso, runStatement } from './sql.ts';

const HOOK = `id, owner, thread_id, project, model, ${iso('created_at')} as created_at`;

/**
 * Hooks in `hooks`, keys in `hook_keys`. A key is claimed by one upsert whose update only takes a row older
 * than the window: two claims at once meet on the row's lock, and the second finds the first's call id.
 */
export function mikroOrmHookStore(orm: MikroORM): HookStore {
  return {
    async create(hook, max) {
      const rows = await runStatement(orm, `insert into hooks (id, owner, thread_id, project, model, secret_hash, created_at)
        select ?::uuid, ?, ?::uuid, ?, ?, ?, ?::timestamptz where (select count(*) from hooks where owner = ?) < ?::int returning id`,
        [hook.id, hook.owner, hook.thread_id, hook.project, hook.model, hook.secret_hash, hook.created_at, hook.owner, max]);
      return rows.length === 1;
    },
    list: (owner) => runStatement<Hook>(orm, `select ${HOOK} from hooks where owner = ? order by id desc`, [owner]),
    async remove(owner, id) {
      if (!isUuid(id)) return false;
      // The hook and its kept keys in one statement.
      const [row] = await runStatement<{ removed: number }>(orm, `with gone as (delete from hooks where id = ? and owner = ? returning id),
        keys as (delete from hook_keys where hook_id in (select id from gone)) select count(*)::int as removed from gone`, [id, owner]);
      return row!.removed === 1;
    },
    async find(id) {
      if (!isUuid(id)) return null;
      const [row] = await runStatement<StoredHook>(orm, `select ${HOOK}, secret_hash from hooks where id = ?`, [id]);
      return row ?? null;
    },
    async claimKey({ hook_id, key, call_id, at, since }) {
      const [claimed] = await runStatement<{ call_id: string }>(orm, `insert into hook_keys (hook_id, key, call_id, created_at) values (?, ?, ?, ?)
        on conflict (hook_id, key) do update set call_id = excluded.call_id, created_at = excluded.created_at
        where hook_keys.created_at <= ?::timestamptz returning call_id`, [hook_id, key, call_id, at, since]);
      if (claimed !== undefined) return claimed.call_id;
      const [kept] = await runStatement<{ call_id: string }>(orm, 'select call_id from hook_keys where hook_id = ? and key = ?', [hook_id, key]);
      return kept?.call_id ?? call_id;
    },
  };
}
