/**
 * The sign-in page: with an identity provider configured, a link that starts its sign-in (a plain link: the
 * server answers with a redirect, and the page's CSP lets no form post anywhere); and the token form, where a
 * token (a world-file one, a personal access token, the demo's) starts a session (POST /api/session). Browser code.
 */
import { useSignal } from '@preact/signals';
import { api } from './api.ts';

export function SignIn({ demoToken, oidcName, onSignedIn }: { demoToken: string | null; oidcName: string | null; onSignedIn: () => void }) {
  const token = useSignal(demoToken ?? '');
  const error = useSignal('');
  const busy = useSignal(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (token.value.trim() === '' || busy.value) return;
    busy.value = true;
    error.value = '';
    const { response } = await api.POST('/api/session', { body: { token: token.value.trim() } }).catch(() => ({ response: null }));
    busy.value = false;
    if (response?.ok) return onSignedIn();
    error.value = response === null ? 'The console could not be reached.'
      : response.status === 429 ? 'Too many sign-in attempts: try again in a minute.'
      : 'That token was not accepted.';
  };
  return (
    <main class="sign-in">
      <h1>Agent console</h1>
      {oidcName !== null && (
        <>
          <a class="oidc-sign-in" href="/api/session/oidc">Sign in with {oidcName}</a>
          <p class="or">or with an access token</p>
        </>
      )}
      <form onSubmit={submit} aria-describedby="sign-in-error">
        <label for="token">Access token</label>
        <input id="token" type="password" autocomplete="current-password" required value={token.value}
          onInput={(e) => (token.value = (e.target as HTMLInputElement).value)} />
        <button type="submit" disabled={busy.value}>Sign in</button>
        {demoToken !== null && <p class="hint">Demo mode: the demo user's token is filled in.</p>}
        <p id="sign-in-error" role="alert" class="error">{error.value}</p>
      </form>
    </main>
  );
}
