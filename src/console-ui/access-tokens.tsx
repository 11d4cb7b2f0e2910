/**
 * Tokens (`#/tokens`): the caller's personal access tokens, for scripts. A new token is shown here once, with
 * how to send it; the page keeps it nowhere else, and the server only its hash. Revoking asks first, then
 * stops the token at once. Names are the caller's text: shown as text. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from './api.ts';

interface AccessToken { readonly id: string; readonly name: string; readonly created_at: string; readonly expires_at: string | null; readonly last_used_at: string | null }
type CreatedToken = AccessToken & { readonly token: string };

const day = (iso: string) => new Date(iso).toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' });
const moment = (iso: string) => new Date(iso).toLocaleString([], { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });

function When({ iso, never, long = false }: { iso: string | null; never: string; long?: boolean }) {
  if (iso === null) return <span class="hint">{never}</span>;
  return <time dateTime={iso} title={iso}>{long ? moment(iso) : day(iso)}</time>;
}

export function AccessTokens() {
  const tokens = useSignal<readonly AccessToken[] | null>(null);
  const name = useSignal('');
  const days = useSignal('');
  const created = useSignal<CreatedToken | null>(null);
  /** The token whose Revoke was pressed: its row asks before revoking. */
  const confirming = useSignal<string | null>(null);
  const error = useSignal('');
  const busy = useSignal(false);

  const load = async () => {
    const { data, error: problem, response } = await api.GET('/api/account/tokens');
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    tokens.value = data;
  };
  useEffect(() => void load(), []);

  const create = async (event: Event) => {
    event.preventDefault();
    if (name.value.trim() === '' || busy.value) return;
    const expiry = days.value.trim();
    if (expiry !== '' && !/^[0-9]+$/.test(expiry)) return void (error.value = 'The expiry is a whole number of days, or empty for none.');
    busy.value = true;
    error.value = '';
    created.value = null;
    const body = { name: name.value.trim(), ...(expiry === '' ? {} : { expires_in_days: Number(expiry) }) };
    const { data, error: problem, response } = await api.POST('/api/account/tokens', { body });
    busy.value = false;
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    created.value = data;
    name.value = '';
    days.value = '';
    await load();
  };

  const revoke = async (token: AccessToken) => {
    error.value = '';
    confirming.value = null;
    const { error: problem, response } = await api.DELETE('/api/account/tokens/{id}', { params: { path: { id: token.id } } });
    // Already gone (revoked elsewhere) is what was asked for.
    if (!response.ok && response.status !== 404) error.value = problemText(problem, response.status);
    if (created.value?.id === token.id) created.value = null;
    await load();
  };

  return (
    <section class="access-tokens" aria-labelledby="access-tokens-title">
      <h2 id="access-tokens-title">Tokens</h2>
      <p class="hint">A personal access token lets a script call the API as you. Revoke it when the script no longer needs it.</p>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      {created.value !== null && (
        <div class="new-token" role="status">
          <p>Your new token <strong class="token-name">{created.value.name}</strong>:</p>
          <p><code class="secret">{created.value.token}</code></p>
          <p class="warning">Copy it now: it will not be shown again.</p>
          <p class="hint">Send it with each request as <code>Authorization: Bearer &lt;token&gt;</code>.</p>
          <button type="button" onClick={() => (created.value = null)}>Done</button>
        </div>
      )}
      {tokens.value === null ? <p class="hint">Loading…</p> : tokens.value.length === 0 ? <p class="empty">You have no tokens.</p> : (
        <table class="data-table">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Expires</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {tokens.value.map((token) => (
              <tr key={token.id} data-token-id={token.id}>
                <td class="name">{token.name}</td>
                <td><When iso={token.created_at} never="" /></td>
                <td><When iso={token.expires_at} never="never" />{token.expires_at !== null && Date.parse(token.expires_at) <= Date.now() && <span class="expired"> (expired)</span>}</td>
                <td class="last-used"><When iso={token.last_used_at} never="never" long /></td>
                <td class="row-actions">
                  {confirming.value === token.id ? (
                    <span class="confirm" role="group" aria-label={`Revoke ${token.name}?`}>
                      <span>Revoke it?</span>
                      <button type="button" class="danger" onClick={() => void revoke(token)}>Yes, revoke</button>
                      <button type="button" onClick={() => (confirming.value = null)}>Cancel</button>
                    </span>
                  ) : (
                    <button type="button" onClick={() => (confirming.value = token.id)} aria-label={`Revoke ${token.name}`}>Revoke</button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="new-token-form" onSubmit={(event) => void create(event)}>
        <h3>New token</h3>
        <div class="fields">
          <div>
            <label for="token-name">Name</label>
            <input id="token-name" required maxLength={100} placeholder="e.g. deploy script" value={name.value}
              onInput={(event) => (name.value = (event.target as HTMLInputElement).value)} />
          </div>
          <div>
            <label for="token-days">Expires after (days)</label>
            <input id="token-days" type="number" min={1} max={3650} step={1} inputMode="numeric" placeholder="never" value={days.value}
              onInput={(event) => (days.value = (event.target as HTMLInputElement).value)} />
          </div>
          <button type="submit" disabled={busy.value}>Create token</button>
        </div>
      </form>
    </section>
  );
}
