import * as oidc from 'openid-client';
import type { OidcIdentity } from '../../domain/accounts.ts';
import { IdentityProviderError, type AuthorizationStart, type CallbackRefusal, type IdentityProvider } from '../../ports/identity-provider.ts';
import { storableText } from '../../domain/text.ts';

/**
 * The identity provider port through `openid-client` 6, a certified OpenID Connect relying party: it makes
 * the PKCE pair, `state` and `nonce`, and checks the callback and the ID token (signature against the
 * provider's keys, `iss`, `aud`, `exp`, `nonce`). Hand-written token checks are a classic hole; this file
 * only hands the library what the sign-in started with and names the reason of a refusal.
 */

export interface OpenIdOptions {
  /** The issuer exactly as the provider names it in its discovery document (users are keyed by it). */
  readonly issuer: string;
  readonly clientId: string;
  /** Sent with HTTP Basic authentication at the token endpoint; never in a message. */
  readonly clientSecret: string;
  /** Each request to the provider (discovery, keys, token): 10 s unless told. */
  readonly timeoutMs?: number;
}

const SCOPE = 'openid email profile';
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

/**
 * Whether an issuer is on this host (127.0.0.1, ::1 or localhost): the only place plain `http:` is
 * tolerated, for a provider a developer or a test runs next to the service. Anywhere else, codes and
 * tokens would cross the network in the clear.
 */
export function isLoopbackIssuer(issuer: string | URL): boolean {
  try {
    return LOOPBACK_HOSTS.has(new URL(issuer).hostname);
  } catch {
    return false;
  }
}

/**
 * A provider that discovers the issuer's metadata on first use, not at construction: the service starts
 * while the provider is down, and a failed discovery is tried again on the next sign-in. Throws at once
 * (a configuration error) for an issuer that is not a URL, or `http:` off the loopback.
 */
export function openIdIdentityProvider(options: OpenIdOptions): IdentityProvider {
  const { issuer, clientId, clientSecret } = options;
  const server = issuerUrl(issuer);
  const timeoutSeconds = (options.timeoutMs ?? 10_000) / 1000;
  let discovering: Promise<oidc.Configuration> | null = null;

  const configuration = (): Promise<oidc.Configuration> => {
    discovering ??= discover(server, issuer, clientId, clientSecret, timeoutSeconds).catch((error: unknown) => {
      discovering = null;
      throw error;
    });
    return discovering;
  };

  return {
    issuer,
    async start(redirectUri) {
      const config = await configuration();
      const code_verifier = oidc.randomPKCECodeVerifier();
      const state = oidc.randomState();
      const nonce = oidc.randomNonce();
      const url = oidc.buildAuthorizationUrl(config, {
        redirect_uri: redirectUri,
        scope: SCOPE,
        code_challenge: await oidc.calculatePKCECodeChallenge(code_verifier),
        code_challenge_method: 'S256',
        state,
        nonce,
      });
      const started: AuthorizationStart = { url: url.href, state, nonce, code_verifier };
      return started;
    },
    async finish(callbackUrl, expected) {
      const config = await configuration();
      // The library sends as redirect_uri the URL it is given without its query: the one the sign-in
      // started with, whatever host or proxy the callback reached the service through.
      const current = new URL(expected.redirect_uri);
      current.search = callbackUrl.search;
      try {
        const tokens = await oidc.authorizationCodeGrant(config, current, {
          expectedState: expected.state,
          expectedNonce: expected.nonce,
          pkceCodeVerifier: expected.code_verifier,
          idTokenExpected: true,
        });
        const claims = tokens.claims();
        if (claims === undefined) throw new IdentityProviderError('token_invalid', 'the token response has no ID token');
        const identity = identityOf(claims);
        if (identity.email !== null && identity.name !== null) return identity;
        // A provider that follows the spec strictly keeps email and name out of the ID token in the code flow:
        // they are read from its userinfo endpoint, for the same subject (the library checks `sub`).
        const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
        const more = identityOf({ ...claims, email: info.email, email_verified: info.email_verified, name: info.name });
        return identity.email !== null ? { ...identity, name: identity.name ?? more.name } : { ...more, name: identity.name ?? more.name };
      } catch (error) {
        if (error instanceof IdentityProviderError) throw error;
        throw refusal(error, callbackUrl.searchParams.get('state') !== expected.state);
      }
    },
  };
}

function issuerUrl(issuer: string): URL {
  let url: URL;
  try {
    url = new URL(issuer);
  } catch {
    throw new Error(`The OpenID Connect issuer is not a URL: ${JSON.stringify(issuer)}`);
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackIssuer(url)) return url;
  throw new Error(`The OpenID Connect issuer must be https (plain http only on 127.0.0.1, ::1 or localhost): ${issuer}`);
}

/**
 * The issuer's metadata, and a client that authenticates with its secret. The discovered issuer must be
 * the configured string exactly (the library compares them as URLs, so `…/` and `…` would pass): an ID
 * token's `iss` is then the configured issuer, the one accounts are keyed by.
 */
async function discover(server: URL, issuer: string, clientId: string, clientSecret: string, timeoutSeconds: number): Promise<oidc.Configuration> {
  let config: oidc.Configuration;
  try {
    config = await oidc.discovery(server, clientId, undefined, oidc.ClientSecretBasic(clientSecret), {
      timeout: timeoutSeconds,
      [oidc.customFetch]: reaching,
      // Only ever true for a loopback issuer: issuerUrl refused plain http anywhere else.
      ...(server.protocol === 'http:' ? { execute: [oidc.allowInsecureRequests] } : {}),
    });
  } catch (error) {
    if (isClientError(error) && error.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') {
      const named = discoveredIssuer(error);
      throw new IdentityProviderError('provider_unavailable', `The OpenID Connect provider at ${issuer} names its issuer ${named ?? '(unknown)'}: configure the issuer exactly as the provider names it`);
    }
    throw new IdentityProviderError('provider_unavailable', `The OpenID Connect provider at ${issuer} could not be discovered: ${describe(error)}`);
  }
  const named = config.serverMetadata().issuer;
  if (named !== issuer) {
    throw new IdentityProviderError('provider_unavailable', `The OpenID Connect provider at ${issuer} names its issuer ${named}: configure the issuer exactly as the provider names it`);
  }
  return config;
}

function discoveredIssuer(error: oidc.ClientError): string | null {
  const cause = error.cause as { body?: { issuer?: unknown } } | undefined;
  return typeof cause?.body?.issuer === 'string' ? cause.body.issuer : null;
}

/** Raised by {@link reaching}: the provider did not answer, or answered with a server error. */
class ProviderUnreachable extends Error {
  override readonly name = 'ProviderUnreachable';
}

/**
 * `fetch` for the library, telling a provider that cannot be reached (connection refused, time-out, 5xx)
 * from one that answered: the library wraps what fetch throws, so the refusal finds this error among its causes.
 */
const reaching: oidc.CustomFetch = async (url, init) => {
  let response: Response;
  try {
    response = await fetch(url, init as RequestInit);
  } catch (error) {
    throw new ProviderUnreachable(`${new URL(url).origin} did not answer: ${describe(error)}`);
  }
  if (response.status >= 500) throw new ProviderUnreachable(`${new URL(url).origin} answered ${response.status}`);
  return response;
};

/**
 * The refusal for what the library threw. `stateDiffers` tells a callback whose `state` is not this
 * browser's (the library checks it before anything else, `error` included) from the other refusals.
 * The message holds the library's own messages and the provider's OAuth error, never the library's
 * objects: those carry requests and responses, and nothing of the client's credentials may reach a log.
 */
function refusal(error: unknown, stateDiffers: boolean): IdentityProviderError {
  const reason = reasonOf(error, stateDiffers);
  return new IdentityProviderError(reason, `OpenID Connect sign-in refused (${reason}): ${describe(error)}`);
}

function reasonOf(error: unknown, stateDiffers: boolean): CallbackRefusal {
  if (causes(error).some((cause) => cause instanceof ProviderUnreachable)) return 'provider_unavailable';
  if (isClientError(error) && (error.code === 'OAUTH_TIMEOUT' || error.code === 'OAUTH_ABORT')) return 'provider_unavailable';
  if (stateDiffers) return 'state_mismatch';
  if (error instanceof oidc.AuthorizationResponseError) return 'provider_error';
  if (error instanceof oidc.ResponseBodyError) return error.error === 'invalid_grant' ? 'code_refused' : 'provider_error';
  // What is left failed a check of the answers: the ID token's signature, iss, aud, exp or nonce, or
  // the callback's `iss` (a response from another provider).
  return 'token_invalid';
}

function identityOf(claims: oidc.IDToken): OidcIdentity {
  // What storage cannot keep (NUL, a lone surrogate) becomes U+FFFD: a provider's claims are text from outside.
  const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? storableText(value) : null);
  return {
    issuer: claims.iss,
    subject: storableText(claims.sub),
    email: text(claims.email),
    // Some providers (Amazon Cognito) send it as the string "true".
    email_verified: claims.email_verified === true || claims.email_verified === 'true',
    name: text(claims.name),
  };
}

function isClientError(error: unknown): error is oidc.ClientError {
  return error instanceof oidc.ClientError;
}

function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let at = error; at !== undefined && at !== null && chain.length < 10; at = (at as { cause?: unknown }).cause) chain.push(at);
  return chain;
}

/** The messages of an error and its causes, with the provider's OAuth `error` and description. */
function describe(error: unknown): string {
  const parts: string[] = [];
  for (const cause of causes(error)) {
    if (!(cause instanceof Error)) break;
    let part = cause.message;
    const oauthError = (cause as { error?: unknown }).error;
    if (typeof oauthError === 'string') {
      const description = (cause as { error_description?: unknown }).error_description;
      part += ` (${oauthError}${typeof description === 'string' ? `: ${description}` : ''})`;
    }
    if (!parts.includes(part)) parts.push(part);
  }
  return (parts.join(': ') || String(error)).slice(0, 500);
}
