import type { MikroORM } from '@mikro-orm/postgresql';
import type { Thread } from '../../domain/model.ts';
import type { ThreadEdits } from '../../ports/thread-edits.ts';
import { THREAD } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';

/** The owner's edits of `threads`: one update, the owner in its `where`. */
export function mikroOrmThreadEdits(orm: MikroORM): ThreadEdits {
  return {
    async editThread(owner, threadId, changes) {
      if (!isUuid(threadId)) return null;
      const sets: string[] = [];
      const params: unknown[] = [];
      if (changes.title !== undefined) sets.push('title = ?'), params.push(changes.title);
      if (changes.archived !== undefined) sets.push('archived = ?'), params.push(changes.archived);
      const statement = sets.length === 0
        ? `select ${THREAD} from threads where id = ? and owner = ?`
        : `update threads set ${sets.join(', ')} where id = ? and owner = ? returning ${THREAD}`;
      const [row] = await runStatement<Thread>(orm, statement, [...params, threadId, owner]);
      return row ?? null;
    },
  };
}
