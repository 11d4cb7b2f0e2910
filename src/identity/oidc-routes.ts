import type { OidcSignIn } from '../../core/accounts/oidc-sign-in.ts';
import { formatOrigin } from '../../domain/origin.ts';
import { clientAddress } from '../http/context.ts';
import { empty, problem, type Reply } from '../http/reply.ts';
import { route, type Route } from '../http/route.ts';
import { clientKey } from '../limits/client-key.ts';
import type { WindowLimiter } from '../limits/window-limiter.ts';
import { sessionCookie } from './credential.ts';
import type { GuessLimit } from './guess-limit.ts';
import { refusalPage } from './sign-in-page.ts';

/** The cookie that binds a sign-in's callback to the browser that started it: a random value, 10 minutes. */
export const FLOW_COOKIE = 'console_sign_in';
export const CALLBACK_PATH = '/api/session/oidc/callback';
const FLOW_COOKIE_PATTERN = /^[A-Za-z0-9_-]{16,128}$/;

/** What the OpenID Connect routes are made of; `signIn` is null when no provider is configured. */
export interface OidcRouteDeps {
  readonly signIn: OidcSignIn | null;
  /** OIDC_REDIRECT_URL; null: built from the console origin the sign-in started on. */
  readonly redirectUrl: string | null;
  readonly guesses: GuessLimit;
  /** Sign-ins one client may start per minute (each stores a flow). */
  readonly starts: WindowLimiter;
  readonly trustProxy: boolean;
  readonly signedIn: (method: 'token' | 'oidc', outcome: string) => void;
}

function flowCookieOf(header: string | undefined): string | null {
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === FLOW_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return FLOW_COOKIE_PATTERN.test(value) ? value : null;
    }
  }
  return null;
}

/** Refusals that say nothing of a guessed credential: the provider's own trouble. */
const NOT_GUESSES = new Set(['provider_unavailable', 'provider_error']);

/**
 * `GET /api/session/oidc` starts a sign-in with the configured OpenID Connect provider (a redirect there);
 * `GET /api/session/oidc/callback` finishes it: a session cookie and a redirect to the console, or a page that
 * says why not. A refused callback counts against the client's budget of failed credentials.
 */
export function oidcRoutes(deps: OidcRouteDeps): Route[] {
  const { signIn } = deps;
  return [
    route({
      method: 'GET',
      path: '/api/session/oidc',
      summary: 'Sign in with the identity provider: redirects there (authorization code flow with PKCE, state and nonce)',
      operationId: 'startOidcSignIn',
      responses: {
        302: 'To the identity provider',
        404: 'No identity provider is configured (`sign_in_not_configured`)',
        429: 'Too many sign-ins started from this client this minute (Retry-After)',
        503: 'The identity provider could not be reached (`identity_provider_unavailable`)',
      },
      handle: async ({ ctx }): Promise<Reply> => {
        if (signIn === null) return problem({ code: 'sign_in_not_configured' });
        const key = clientKey(clientAddress(ctx, deps.trustProxy));
        const wait = deps.starts.blocked(key);
        if (wait !== null) return problem({ code: 'too_many_sign_in_starts' }, { 'retry-after': String(wait) });
        deps.starts.record(key);
        const redirectUri = deps.redirectUrl ?? (ctx.origin === null ? null : `${formatOrigin(ctx.origin)}${CALLBACK_PATH}`);
        if (redirectUri === null) return problem({ code: 'invalid_host' });
        const begun = await signIn.begin(redirectUri).catch((error: unknown) => {
          ctx.log.warn({ err: error }, 'the identity provider could not be reached to start a sign-in');
          return null;
        });
        if (begun === null) return problem({ code: 'identity_provider_unavailable' }, { 'cache-control': 'no-store' });
        const secure = ctx.scheme === 'https' ? '; Secure' : '';
        // The cookie goes where the browser comes back: the registered callback's path (a proxy may prefix it).
        const path = deps.redirectUrl === null ? CALLBACK_PATH : new URL(deps.redirectUrl).pathname;
        return empty(302, {
          location: begun.location,
          // Lax: the provider's redirect back is a top-level GET, which carries it.
          'set-cookie': `${FLOW_COOKIE}=${begun.flow}; Path=${path}; HttpOnly; SameSite=Lax; Max-Age=${begun.max_age_seconds}${secure}`,
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        });
      },
    }),
    route({
      method: 'GET',
      path: CALLBACK_PATH,
      summary: 'Where the identity provider sends the browser back: a session and a redirect to the console, or a page that says why not',
      operationId: 'finishOidcSignIn',
      responses: {
        303: 'Signed in: to the console',
        400: 'The sign-in expired, does not match this browser, or the provider refused it (an HTML page)',
        403: 'Not invited, or deactivated (an HTML page)',
        404: 'No identity provider is configured (`sign_in_not_configured`)',
        429: 'Too many failed credentials from this client this minute (Retry-After)',
        502: 'The identity provider could not be reached (an HTML page)',
      },
      handle: async ({ ctx }): Promise<Reply> => {
        if (signIn === null) return problem({ code: 'sign_in_not_configured' });
        // The URL the provider redirected to, as the provider built it: its query holds the code and state.
        const callbackUrl = new URL(`${CALLBACK_PATH}${ctx.search === null ? '' : `?${ctx.search}`}`, 'http://callback.invalid');
        let refusal: { reason: string; detail?: string } | null = null;
        const found = await deps.guesses(ctx, async () => {
          const outcome = await signIn.finish(callbackUrl, flowCookieOf(ctx.req.headers.cookie));
          if (outcome.ok) return outcome;
          refusal = outcome.detail === undefined ? { reason: outcome.reason } : { reason: outcome.reason, detail: outcome.detail };
          // A refusal the provider caused is no guess; any other counts against the client's budget.
          return NOT_GUESSES.has(outcome.reason) ? { refused: outcome.reason } : null;
        });
        if (!found.ok) return found.error;
        const outcome = found.value;
        if (outcome === null || 'refused' in outcome) {
          const reason = (outcome === null ? refusal!.reason : outcome.refused) as Parameters<typeof refusalPage>[0];
          deps.signedIn('oidc', reason);
          // Why, for the operator (an audience, a clock skew, an issuer): the library's words, never a credential.
          ctx.log.info({ reason, detail: (refusal as { detail?: string } | null)?.detail }, 'a sign-in with the identity provider was refused');
          return refusalPage(reason);
        }
        deps.signedIn('oidc', 'signed_in');
        ctx.log.info({ user: outcome.account.id, created: outcome.created }, 'signed in with the identity provider');
        return empty(303, {
          location: '/',
          'set-cookie': sessionCookie(outcome.session.secret, ctx.scheme === 'https', outcome.session.max_age_seconds),
          'cache-control': 'no-store',
          'referrer-policy': 'no-referrer',
        });
      },
    }),
  ];
}
