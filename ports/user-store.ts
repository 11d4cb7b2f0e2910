import type { User } from '../domain/model.ts';

/** Finds the user a credential names, by the SHA-256 hex of the token; null for none. Tokens are never stored. */
export type UserByTokenHash = (tokenHash: string) => Promise<User | null>;
