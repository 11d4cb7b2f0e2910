import * as v from 'valibot';
import type { Administration } from '../../core/accounts/administration.ts';
import type { SessionKeeper } from '../../core/accounts/sessions.ts';
import type { UserByCredential } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';
import { empty, json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { clearedSessionCookie, credentialOf, sessionCookie, TOKEN_PATTERN } from './credential.ts';
import { tokenHash } from './authenticate.ts';
import type { GuessLimit } from './guess-limit.ts';
import { answer, Me } from '../http/response-schemas.ts';

const SessionBody = v.object({
  token: v.pipe(v.string('must be a string'), v.regex(TOKEN_PATTERN, 'must be 1 to 512 token characters')),
});

/** What the session routes are made of. */
export interface SessionRouteDeps {
  readonly userByCredential: UserByCredential;
  readonly sessions: SessionKeeper;
  readonly admin: Administration;
  readonly guesses: GuessLimit;
  readonly clock: Clock;
  /** Told of each sign-in and each refusal, by method and outcome (metrics). */
  readonly signedIn: (method: 'token' | 'oidc', outcome: string) => void;
}

/**
 * `POST/GET/DELETE /api/session`: sign in with a token, who am I, sign out. A token sign-in starts a
 * server-side session: the cookie holds its random id, never the token. A token that names no one counts
 * against its client's budget of failed credentials, the same one bearer tokens, cookies and the live socket
 * spend; a client past it gets 429 with `Retry-After` and no answer about its token, right or wrong.
 */
export function sessionRoutes(deps: SessionRouteDeps): Route[] {
  const { guesses } = deps;
  return [
    route({
      method: 'POST',
      path: '/api/session',
      summary: 'Sign in with a token: starts a server-side session, whose random id goes in the HttpOnly session cookie',
      operationId: 'signIn',
      body: SessionBody,
      responses: { 204: 'Signed in', 401: 'The token names no user', 403: 'A personal access token or a session id, not a sign-in token (`credential_not_allowed`)', 422: 'No token', 429: 'Too many failed credentials from this client this minute (Retry-After)' },
      handle: async ({ body, ctx }) => {
        const now = new Date(deps.clock.now()).toISOString();
        const found = await guesses(ctx, () => deps.userByCredential(tokenHash(body.token), now));
        if (!found.ok) return found.error;
        if (found.value === null) {
          deps.signedIn('token', 'refused');
          return problem({ code: 'unauthenticated', detail: 'The token names no user' }, { 'www-authenticate': 'Bearer' });
        }
        // Only a world-file token signs in: a session started from a personal token would outlive its expiry
        // and its revocation, and a session id is already a session.
        if (found.value.via !== 'world') {
          deps.signedIn('token', 'refused');
          return problem({ code: 'credential_not_allowed', detail: found.value.via === 'token'
            ? 'A personal access token does not sign in to the console: send it as a bearer token, or sign in with your identity provider'
            : 'A session id does not sign in: the session cookie already does' });
        }
        const session = await deps.sessions.start(found.value.id);
        if (session === null) return problem({ code: 'unauthenticated', detail: 'The token names no user' }, { 'www-authenticate': 'Bearer' });
        deps.signedIn('token', 'signed_in');
        return empty(204, { 'set-cookie': sessionCookie(session.secret, ctx.scheme === 'https', session.max_age_seconds), 'cache-control': 'no-store' });
      },
    }),
    route({
      method: 'GET',
      path: '/api/session',
      summary: 'The calling user, and their role',
      operationId: 'whoAmI',
      auth: true,
      responses: { 200: answer('The calling user', Me), 401: 'No valid credential' },
      handle: async ({ user }) => {
        const account = await deps.admin.me(user.id);
        return json(200, { id: user.id, name: user.name, role: account?.role ?? 'member' }, { 'cache-control': 'no-store' });
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/session',
      summary: 'Sign out: ends the session on every instance at once, and clears the session cookie',
      operationId: 'signOut',
      responses: { 204: 'Signed out' },
      handle: async ({ ctx }) => {
        // Only the cookie's session ends: a bearer token is the client's own to revoke.
        const cookie = credentialOf(ctx.req, 'cookie');
        if (cookie !== null) await deps.sessions.end(cookie);
        return empty(204, { 'set-cookie': clearedSessionCookie(ctx.scheme === 'https'), 'cache-control': 'no-store' });
      },
    }),
  ];
}
