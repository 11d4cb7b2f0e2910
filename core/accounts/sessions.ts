import type { Accounts } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';
import type { Secrets } from './secrets.ts';

/** A session just started: its secret goes in the cookie, and is never stored. */
export interface StartedSession {
  readonly secret: string;
  readonly expires_at: string;
  readonly max_age_seconds: number;
}

/**
 * Server-side sessions: the cookie holds a random id, storage its SHA-256 and its end. Ending one (sign-out,
 * or an admin's deactivation) takes effect at once on every instance: each request looks the session up.
 */
export function sessionKeeper(options: {
  readonly accounts: Accounts;
  readonly clock: Clock;
  readonly secrets: Secrets;
  readonly ttlMs: number;
  /** Told of a user whose credentials changed (live sockets are checked again). */
  readonly changed: (userId: string) => void;
}) {
  const { accounts, clock, secrets } = options;
  return {
    /** A new session of the user's; null when the user is not active (deactivated meanwhile). */
    async start(userId: string): Promise<StartedSession | null> {
      const secret = secrets.newSecret();
      const now = clock.now();
      const expires_at = new Date(now + options.ttlMs).toISOString();
      const started = await accounts.startSession({ hash: secrets.hash(secret), user_id: userId, created_at: new Date(now).toISOString(), expires_at });
      return started ? { secret, expires_at, max_age_seconds: Math.floor(options.ttlMs / 1000) } : null;
    },
    /** Ends the session a cookie's value names; a value that names none (or a token) ends nothing. */
    async end(secret: string): Promise<void> {
      const hash = secrets.hash(secret);
      const user = await accounts.userByCredential(hash, new Date(clock.now()).toISOString());
      await accounts.endSession(hash);
      if (user !== null) options.changed(user.id);
    },
  };
}

export type SessionKeeper = ReturnType<typeof sessionKeeper>;
