import type { OidcIdentity } from '../domain/accounts.ts';

/** What a sign-in's start leaves to be checked at its callback (kept server-side, bound to the browser by a cookie). */
export interface AuthorizationStart {
  /** Where the browser goes: the provider's authorization endpoint with the request's parameters. */
  readonly url: string;
  readonly state: string;
  readonly nonce: string;
  readonly code_verifier: string;
}

/** Why a callback gets no identity. Each is a page of its own, and a metric's reason. */
export type CallbackRefusal =
  /** The provider answered an error (the person declined, or the provider refused the request). */
  | 'provider_error'
  /** `state` missing or not the one this browser's sign-in started with. */
  | 'state_mismatch'
  /** The code was refused at the token endpoint: replayed, expired, or for another client. */
  | 'code_refused'
  /** The ID token failed a check: signature, issuer, audience, expiry or nonce. */
  | 'token_invalid'
  /** The provider could not be reached. */
  | 'provider_unavailable';

export class IdentityProviderError extends Error {
  constructor(readonly reason: CallbackRefusal, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'IdentityProviderError';
  }
}

/**
 * An OpenID Connect provider, through a certified client library: the authorization-code flow with PKCE,
 * `state` and `nonce`. `finish` verifies everything the ID token must satisfy (signature, `iss`, `aud`, `exp`,
 * `nonce`) and throws `IdentityProviderError` with the reason otherwise.
 */
export interface IdentityProvider {
  /** The issuer as configured (users are keyed by it and `sub`). */
  readonly issuer: string;
  readonly start: (redirectUri: string) => Promise<AuthorizationStart>;
  /** `callbackUrl` is the full URL the provider redirected to (its query holds `code` and `state`, or `error`). */
  readonly finish: (callbackUrl: URL, expected: { readonly state: string; readonly nonce: string; readonly code_verifier: string; readonly redirect_uri: string }) => Promise<OidcIdentity>;
}
