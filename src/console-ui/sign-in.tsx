/** The sign-in form: a token becomes the session cookie (POST /api/session). Browser code. */
import { useSignal } from '@preact/signals';
import { api } from './api.ts';

export function SignIn({ demoToken, onSignedIn }: { demoToken: string | null; onSignedIn: () => void }) {
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
