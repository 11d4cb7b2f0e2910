import type { Account, JoinPolicy, JoinRefusal } from '../../domain/accounts.ts';
import type { Accounts } from '../../ports/accounts.ts';
import type { Clock } from '../../ports/clock.ts';
import { IdentityProviderError, type CallbackRefusal, type IdentityProvider } from '../../ports/identity-provider.ts';
import type { Secrets } from './secrets.ts';
import type { SessionKeeper, StartedSession } from './sessions.ts';

/** How long a sign-in may take between leaving for the provider and coming back. */
export const SIGN_IN_FLOW_TTL_MS = 10 * 60_000;

/**
 * Why a callback made no session: the provider's or the token's fault (`CallbackRefusal`), no sign-in under
 * way in this browser (`no_sign_in`: no flow cookie, expired, or already used), or the person may not join.
 */
export type SignInRefusal = CallbackRefusal | 'no_sign_in' | JoinRefusal;

export type SignInOutcome =
  | { readonly ok: true; readonly account: Account; readonly created: boolean; readonly session: StartedSession }
  /** `detail`: what the provider's library said (never a credential), for the operator's log. */
  | { readonly ok: false; readonly reason: SignInRefusal; readonly detail?: string };

/**
 * Sign-in with an OpenID Connect provider (CONTRACT section 13): `begin` keeps the flow's `state`, `nonce` and
 * PKCE verifier server-side under the SHA-256 of a random value the browser holds in a short-lived cookie, so
 * the callback is bound to the browser that started it and works through any instance. `finish` takes the flow
 * once (a replayed callback finds none), has the provider check the code and the ID token, then finds or
 * creates the account by `iss` + `sub` under the join policy, and starts a session.
 */
export function oidcSignIn(options: {
  readonly accounts: Accounts;
  readonly provider: IdentityProvider;
  readonly sessions: SessionKeeper;
  readonly secrets: Secrets;
  readonly clock: Clock;
  readonly policy: JoinPolicy;
  readonly newId: () => string;
}) {
  const { accounts, provider, secrets, clock } = options;
  return {
    /** Where the browser goes, and the flow cookie's value. */
    async begin(redirectUri: string): Promise<{ readonly location: string; readonly flow: string; readonly max_age_seconds: number }> {
      const started = await provider.start(redirectUri);
      const flow = secrets.newSecret();
      await accounts.saveFlow({
        hash: secrets.hash(flow), state: started.state, nonce: started.nonce, code_verifier: started.code_verifier,
        redirect_uri: redirectUri, expires_at: new Date(clock.now() + SIGN_IN_FLOW_TTL_MS).toISOString(),
      });
      return { location: started.url, flow, max_age_seconds: SIGN_IN_FLOW_TTL_MS / 1000 };
    },

    async finish(callbackUrl: URL, flowCookie: string | null): Promise<SignInOutcome> {
      const now = new Date(clock.now()).toISOString();
      const flow = flowCookie === null ? null : await accounts.takeFlow(secrets.hash(flowCookie), now);
      if (flow === null) return { ok: false, reason: 'no_sign_in' };
      let identity;
      try {
        identity = await provider.finish(callbackUrl, flow);
      } catch (error) {
        if (error instanceof IdentityProviderError) return { ok: false, reason: error.reason, detail: error.message };
        throw error;
      }
      const signedIn = await accounts.signInIdentity(identity, options.policy, options.newId(), now);
      if (!signedIn.ok) return signedIn;
      const session = await options.sessions.start(signedIn.account.id);
      // Deactivated between the account's read and the session's insert: no session.
      if (session === null) return { ok: false, reason: 'deactivated' };
      return { ok: true, account: signedIn.account, created: signedIn.created, session };
    },
  };
}

export type OidcSignIn = ReturnType<typeof oidcSignIn>;
