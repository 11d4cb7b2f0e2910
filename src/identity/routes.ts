import * as v from 'valibot';
import type { UserByCredential } from '../../ports/accounts.ts';
import { empty, json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { clearedSessionCookie, sessionCookie, TOKEN_PATTERN } from './credential.ts';
import { tokenHash } from './authenticate.ts';
import type { GuessLimit } from './guess-limit.ts';
import { answer, Me } from '../http/response-schemas.ts';

const SessionBody = v.object({
  token: v.pipe(v.string('must be a string'), v.regex(TOKEN_PATTERN, 'must be 1 to 512 token characters')),
});

/**
 * `POST/GET/DELETE /api/session`: sign in with a token (sets the cookie), who am I, sign out. A
 * token that names no one counts against its client's budget of failed credentials, the same one
 * bearer tokens, cookies and the live socket spend; a client past it gets 429 with `Retry-After`
 * and no answer about its token, right or wrong.
 */
export function sessionRoutes(userByCredential: UserByCredential, guesses: GuessLimit, now: () => string): Route[] {
  return [
    route({
      method: 'POST',
      path: '/api/session',
      summary: 'Sign in: checks the token and stores it in the HttpOnly session cookie',
      operationId: 'signIn',
      body: SessionBody,
      responses: { 204: 'Signed in', 401: 'The token names no user', 422: 'No token', 429: 'Too many failed credentials from this client this minute (Retry-After)' },
      handle: async ({ body, ctx }) => {
        const found = await guesses(ctx, () => userByCredential(tokenHash(body.token), now()));
        if (!found.ok) return found.error;
        if (found.value === null) return problem({ code: 'unauthenticated', detail: 'The token names no user' }, { 'www-authenticate': 'Bearer' });
        return empty(204, { 'set-cookie': sessionCookie(body.token, ctx.scheme === 'https'), 'cache-control': 'no-store' });
      },
    }),
    route({
      method: 'GET',
      path: '/api/session',
      summary: 'The calling user',
      operationId: 'whoAmI',
      auth: true,
      responses: { 200: answer('The calling user', Me), 401: 'No valid credential' },
      handle: ({ user }) => json(200, { id: user.id, name: user.name }, { 'cache-control': 'no-store' }),
    }),
    route({
      method: 'DELETE',
      path: '/api/session',
      summary: 'Sign out: clears the session cookie',
      operationId: 'signOut',
      responses: { 204: 'Signed out' },
      handle: ({ ctx }) => empty(204, { 'set-cookie': clearedSessionCookie(ctx.scheme === 'https') }),
    }),
  ];
}
