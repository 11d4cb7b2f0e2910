import * as crypto from 'node:crypto';
import type { Credential as User } from '../../domain/accounts.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import type { UserByCredential } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';
import type { RequestContext } from '../http/context.ts';
import { problem, type Reply } from '../http/reply.ts';
import { credentialOf } from './credential.ts';
import type { GuessLimit } from './guess-limit.ts';

/** Resolves the calling user of a request, or the answer that refuses it (401, or 429 for a client that guessed too often). */
export type Authenticate = (ctx: RequestContext) => Promise<Result<User, Reply>>;

/** node's one-shot digest (20.12 and later): no Hash object per call. Older runtimes (the engines allow 20.0) build one. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

/** SHA-256 hex of a token (UTF-8): tokens are looked up, and stored, only by this hash. Once per authenticated request. */
export const tokenHash: (token: string) => string =
  oneShot !== undefined
    ? (token) => oneShot('sha256', token, 'hex')
    : (token) => crypto.createHash('sha256').update(token, 'utf8').digest('hex');

/** The answer to a request with no credential, or one that names no user. */
export const unauthenticated = (): Reply => problem({ code: 'unauthenticated' }, { 'www-authenticate': 'Bearer' });

/**
 * Authentication by bearer token or session cookie: a world-file token, a session id or a personal
 * access token, each found by its SHA-256, only while its user is active and it has not expired. A credential that
 * names no one counts against its client's budget; a client past it is refused before the lookup.
 * A request with no credential at all is no guess: it is answered 401 and counted nowhere.
 */
export function authenticator(userByCredential: UserByCredential, guesses: GuessLimit, clock: Pick<Clock, 'now'>): Authenticate {
  // The found user mapped as the lookup settles: one promise, no `async` step of its own.
  const caller = (found: Result<User | null, Reply>): Result<User, Reply> =>
    !found.ok ? found : found.value === null ? fail(unauthenticated()) : ok(found.value);
  return (ctx) => {
    const token = credentialOf(ctx.req);
    if (token === null) return Promise.resolve(fail(unauthenticated()));
    return guesses(ctx, () => userByCredential(tokenHash(token), new Date(clock.now()).toISOString())).then(caller);
  };
}
