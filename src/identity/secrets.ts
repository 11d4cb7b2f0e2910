import { randomBytes } from 'node:crypto';
import type { Secrets } from '../../core/accounts/secrets.ts';
import { tokenHash } from './authenticate.ts';

/** 32 random bytes, base64url: session ids, personal tokens and sign-in flows (256 bits, never guessed). */
export function accountSecrets(): Secrets {
  return { newSecret: () => randomBytes(32).toString('base64url'), hash: tokenHash };
}
