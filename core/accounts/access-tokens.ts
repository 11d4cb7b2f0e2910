import type { AccessToken } from '../../domain/accounts.ts';
import type { Accounts } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Secrets } from './secrets.ts';

/** The prefix of every personal access token: a leaked one is recognisable (secret scanners, logs). */
export const ACCESS_TOKEN_PREFIX = 'cpat_';
/** How many live tokens one person may hold: enough for every script, few enough to review. */
export const MAX_TOKENS_PER_USER = 50;

/** A token just created: the only time its secret is shown. */
export interface CreatedToken extends AccessToken {
  readonly token: string;
}

/** Personal access tokens, created, listed and revoked by their owner; storage keeps only their SHA-256. */
export function accessTokens(options: {
  readonly accounts: Accounts;
  readonly clock: Clock;
  readonly secrets: Secrets;
  readonly newId: () => string;
  /** Told of a user whose credentials changed (live sockets are checked again). */
  readonly changed: (userId: string) => void;
}) {
  const { accounts, clock, secrets } = options;
  return {
    /** A new token; `too_many` when the owner holds as many as allowed, `inactive` when deactivated meanwhile. */
    async create(userId: string, name: string, expiresInDays: number | null): Promise<CreatedToken | 'too_many' | 'inactive'> {
      if ((await accounts.listTokens(userId)).length >= MAX_TOKENS_PER_USER) return 'too_many';
      const token = `${ACCESS_TOKEN_PREFIX}${secrets.newSecret()}`;
      const now = clock.now();
      const stored = {
        id: options.newId(), user_id: userId, name, hash: secrets.hash(token), created_at: new Date(now).toISOString(),
        expires_at: expiresInDays === null ? null : new Date(now + expiresInDays * 86_400_000).toISOString(),
      };
      if (!(await accounts.createToken(stored))) return 'inactive';
      return { id: stored.id, name, created_at: stored.created_at, expires_at: stored.expires_at, last_used_at: null, token };
    },
    list: (userId: string) => accounts.listTokens(userId),
    async revoke(userId: string, tokenId: string): Promise<boolean> {
      const revoked = await accounts.revokeToken(userId, tokenId);
      if (revoked) options.changed(userId);
      return revoked;
    },
  };
}

export type AccessTokens = ReturnType<typeof accessTokens>;
