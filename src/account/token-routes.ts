import * as v from 'valibot';
import type { AccessTokens } from '../../core/accounts/access-tokens.ts';
import { storable, UuidParam } from '../console-api/schemas.ts';
import { answer, AccessTokenInfo, CreatedAccessToken } from '../http/response-schemas.ts';
import { empty, json, problem } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { unauthenticated } from '../identity/authenticate.ts';

const P = '/api/account/tokens';
/** Tokens are the caller's own: never kept by a cache. */
const NO_STORE = { 'cache-control': 'no-store' };

const NewToken = v.object({
  name: v.pipe(v.string('must be a string'), v.trim(), v.minLength(1, 'must not be empty'), v.maxLength(100, 'must be at most 100 characters'), storable),
  expires_in_days: v.optional(v.nullable(v.pipe(v.number('must be a number'), v.integer('must be a whole number'), v.minValue(1, 'must be at least 1'), v.maxValue(3650, 'must be at most 3650'))), null),
});

/**
 * The caller's personal access tokens (CONTRACT section 13): create one (the token is in that answer only; only
 * its SHA-256 is stored), list them (never the token), revoke one at once.
 */
export function tokenRoutes(tokens: AccessTokens): Route[] {
  return [
    route({
      method: 'POST',
      path: P,
      summary: 'A new personal access token for scripts: shown once, sent as `Authorization: Bearer <token>`',
      operationId: 'createAccessToken',
      auth: true,
      body: NewToken,
      responses: {
        201: answer('The token, shown once, and its details', CreatedAccessToken),
        401: 'No valid credential',
        403: 'The caller authenticated with a personal access token (`credential_not_allowed`)',
        409: 'The caller holds as many tokens as allowed (`too_many_tokens`)',
        422: 'No name, or a bad expiry (`validation_failed`)',
      },
      handle: async ({ user, body }) => {
        // A leaked token must not be able to mint one that outlives its expiry or its revocation.
        if (user.via === 'token') return problem({ code: 'credential_not_allowed', detail: 'A personal access token cannot create tokens: sign in to the console to create one' });
        const created = await tokens.create(user.id, body.name, body.expires_in_days ?? null);
        return created === 'too_many' ? problem({ code: 'too_many_tokens' }) : created === 'inactive' ? unauthenticated() : json(201, created, NO_STORE);
      },
    }),
    route({
      method: 'GET',
      path: P,
      summary: "The caller's personal access tokens, newest first, without the tokens",
      operationId: 'listAccessTokens',
      auth: true,
      responses: { 200: answer("The caller's tokens", v.array(AccessTokenInfo)), 401: 'No valid credential' },
      handle: async ({ user }) => json(200, await tokens.list(user.id), NO_STORE),
    }),
    route({
      method: 'DELETE',
      path: `${P}/:id`,
      summary: "Revoke one of the caller's tokens: it stops working at once, on every instance",
      operationId: 'revokeAccessToken',
      auth: true,
      params: v.object({ id: UuidParam }),
      responses: { 204: 'Revoked', 401: 'No valid credential', 404: 'The caller has no token by this id (`token_not_found`)', 422: 'Not a token id (`validation_failed`)' },
      handle: async ({ user, params }) => ((await tokens.revoke(user.id, params.id)) ? empty(204) : problem({ code: 'token_not_found' })),
    }),
  ];
}
