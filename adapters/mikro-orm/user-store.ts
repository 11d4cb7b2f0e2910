import type { MikroORM } from '@mikro-orm/postgresql';
import type { User } from '../../domain/model.ts';
import type { UserByTokenHash } from '../../ports/user-store.ts';
import { runStatement } from './sql.ts';

/** Finds a user by the SHA-256 of their token: one lookup of the unique `users.token_hash` index. */
export const mikroOrmUserByTokenHash =
  (orm: MikroORM): UserByTokenHash =>
  async (tokenHash) =>
    (await runStatement<User>(orm, 'select id, name from users where token_hash = ?', [tokenHash]))[0] ?? null;
