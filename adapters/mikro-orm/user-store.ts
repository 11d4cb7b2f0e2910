import type { MikroORM } from '@mikro-orm/postgresql';
import type { User } from '../../domain/model.ts';
import type { UserByTokenHash } from '../../ports/user-store.ts';
import { runStatement } from './sql.ts';

/** The first row, or null: mapped as the statement settles, so the lookup adds no promise of its own. */
const first = (rows: User[]): User | null => rows[0] ?? null;

/** Finds a user by the SHA-256 of their token: one lookup of the unique `users.token_hash` index. */
export const mikroOrmUserByTokenHash =
  (orm: MikroORM): UserByTokenHash =>
  (tokenHash) =>
    runStatement(orm, 'select id, name from users where token_hash = ?', [tokenHash], first);
