import { createHash } from 'node:crypto';
import type { User } from '../../domain/model.ts';
import type { UserByTokenHash } from '../../ports/user-store.ts';
import type { RequestContext } from '../http/context.ts';
import { credentialOf } from './credential.ts';

/** Resolves the calling user of a request, or null. */
export type Authenticate = (ctx: RequestContext) => Promise<User | null>;

/** SHA-256 hex of a token: tokens are looked up, and stored, only by this hash. */
export const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** Authentication by bearer token or session cookie, against the user store. */
export function authenticator(userByTokenHash: UserByTokenHash): Authenticate {
  return async (ctx) => {
    const token = credentialOf(ctx.req);
    return token === null ? null : userByTokenHash(tokenHash(token));
  };
}
