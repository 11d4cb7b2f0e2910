import type { MikroORM } from '@mikro-orm/postgresql';
import type { Conversation } from '../../domain/model.ts';
import type { SetPermissionMode } from '../../ports/posture-writer.ts';
import { CONVERSATION } from './columns.ts';
import { isUuid, runStatement } from './sql.ts';

/** Sets a conversation's approval posture: one statement. */
export function mikroOrmSetPermissionMode(orm: MikroORM): SetPermissionMode {
  return async (conversationId, mode) => {
    if (!isUuid(conversationId)) return null;
    const [row] = await runStatement<Conversation>(orm,
      `update conversations set permission_mode = ? where id = ? returning ${CONVERSATION}`, [mode, conversationId]);
    return row ?? null;
  };
}
