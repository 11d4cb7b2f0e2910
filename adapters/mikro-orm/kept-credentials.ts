import type { Credential } from '../../domain/accounts.ts';
import type { Accounts } from '../../ports/accounts.ts';

/** How long a credential found is answered from memory before it is looked up again (and its last use written). */
export const KEEP_CREDENTIAL_MS = 10_000;
/** At most this many credentials kept: past it, all are forgotten (each is looked up again on its next use). */
const MAX_KEPT = 1_000;

/**
 * Credentials found, kept in memory for a database no other process writes (the embedded one: its data dir is
 * locked to one process), so a request's first statement is not a lookup of the same token again: a turn's
 * directive sends one statement less. Exact, not eventually so: every write of this storage that could change what
 * a lookup answers (a session ended, a token revoked, an account changed or signed in, a world imported) forgets
 * all of them, before it starts and once it ends, and a lookup under way across a write is not kept. A credential
 * is kept no longer than it lasts (its `expires_at`, against the caller's `now`) nor than
 * {@link KEEP_CREDENTIAL_MS}. Kept: a world token's user and a session's (the console's); a personal token is looked up
 * each time, as its lookup writes its last use. Only found ones are kept: an unknown credential is looked up each
 * time (the guessing budget stands before it).
 */
export function keptCredentials(accounts: Accounts): { readonly accounts: Accounts; readonly forgetting: <T>(write: () => Promise<T>) => Promise<T> } {
  const kept = new Map<string, { readonly credential: Credential; readonly from: number; readonly until: number }>();
  let generation = 0;
  const forget = () => {
    generation += 1;
    kept.clear();
  };
  const forgetting = async <T>(write: () => Promise<T>): Promise<T> => {
    forget();
    try {
      return await write();
    } finally {
      forget();
    }
  };
  return {
    forgetting,
    accounts: {
      ...accounts,
      async userByCredential(hash, now) {
        const at = Date.parse(now);
        const hit = kept.get(hash);
        if (hit !== undefined && at >= hit.from && at < hit.until) return hit.credential;
        const began = generation;
        const found = await accounts.userByCredential(hash, now);
        // A personal token's lookup writes its last use (at most once a minute, by the database's clock of it): it is
        // looked up every time, so that rule stays the database's alone.
        if (found !== null && found.via !== 'token' && began === generation && Number.isFinite(at)) {
          if (kept.size >= MAX_KEPT) kept.clear();
          const ends = found.expires_at === null ? Infinity : Date.parse(found.expires_at);
          kept.set(hash, { credential: found, from: at, until: Math.min(at + KEEP_CREDENTIAL_MS, ends) });
        }
        return found;
      },
      endSession: (hash) => forgetting(() => accounts.endSession(hash)),
      revokeToken: (userId, tokenId) => forgetting(() => accounts.revokeToken(userId, tokenId)),
      signInIdentity: (identity, policy, newId, now) => forgetting(() => accounts.signInIdentity(identity, policy, newId, now)),
      changeAccount: (userId, change) => forgetting(() => accounts.changeAccount(userId, change)),
    },
  };
}
