/**
 * Admin (`#/admin`, linked only for admins; the server refuses anyone else with 403 `not_admin`): every user,
 * a page at a time ("More" follows `next`); deactivate or reactivate one (deactivation ends their sessions and
 * tokens at once), make one an admin or a member; invite an email to join at its first sign-in with the
 * identity provider. Names and emails are the users' text: shown as text. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from './api.ts';
import { me } from './session.ts';

interface Account {
  readonly id: string;
  readonly name: string;
  readonly email: string | null;
  readonly role: 'admin' | 'member';
  readonly active: boolean;
  readonly issuer: string | null;
  readonly created_at: string;
}

/** Users asked for at a time. */
export const USERS_PAGE = 50;

const LAST_ADMIN = 'That would leave no active admin: make another user an admin first.';

const problemCode = (error: unknown): string | null =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null;

export function AdminUsers() {
  const users = useSignal<readonly Account[] | null>(null);
  const next = useSignal<string | null>(null);
  const error = useSignal('');
  /** The user a change is under way for: their buttons wait. */
  const changing = useSignal<string | null>(null);
  const loadingMore = useSignal(false);
  const email = useSignal('');
  const invited = useSignal('');
  const inviting = useSignal(false);

  const page = async (after: string | null) => {
    const query = { limit: String(USERS_PAGE), ...(after === null ? {} : { after }) };
    const { data, error: problem, response } = await api.GET('/api/admin/users', { params: { query } });
    if (data === undefined) {
      error.value = problemCode(problem) === 'not_admin' ? 'Only an admin can see this page.' : problemText(problem, response.status);
      return;
    }
    users.value = after === null ? data.items : [...(users.value ?? []), ...data.items];
    next.value = data.next;
  };
  useEffect(() => void page(null), []);

  const more = async () => {
    if (next.value === null || loadingMore.value) return;
    loadingMore.value = true;
    await page(next.value);
    loadingMore.value = false;
  };

  const change = async (user: Account, body: { active?: boolean; role?: 'admin' | 'member' }) => {
    if (changing.value !== null) return;
    changing.value = user.id;
    error.value = '';
    const { data, error: problem, response } = await api.PATCH('/api/admin/users/{user}', { params: { path: { user: user.id } }, body });
    changing.value = null;
    if (data === undefined) {
      const code = problemCode(problem);
      error.value = code === 'last_admin' ? LAST_ADMIN
        : code === 'user_not_found' ? `${user.name} is no longer a user.`
        : code === 'not_admin' ? 'You are no longer an admin.'
        : problemText(problem, response.status);
      return;
    }
    users.value = (users.value ?? []).map((u) => (u.id === data.id ? data : u));
    // An admin who made themselves a member loses this page; one who deactivated themselves is signed out by the next request.
    if (me.value && data.id === me.value.id && data.role !== me.value.role) me.value = { ...me.value, role: data.role };
  };

  const invite = async (event: Event) => {
    event.preventDefault();
    if (email.value.trim() === '' || inviting.value) return;
    inviting.value = true;
    error.value = '';
    invited.value = '';
    const { data, error: problem, response } = await api.POST('/api/admin/invites', { body: { email: email.value.trim() } });
    inviting.value = false;
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    invited.value = data.email;
    email.value = '';
  };

  return (
    <section class="admin-users" aria-labelledby="admin-users-title">
      <h2 id="admin-users-title">Admin</h2>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      <h3>Users</h3>
      {users.value === null ? (error.value === '' && <p class="hint">Loading…</p>) : (
        <table class="data-table">
          <thead>
            <tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Status</th><th scope="col">Signs in with</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {users.value.map((user) => (
              <tr key={user.id} data-user-id={user.id} data-active={String(user.active)}>
                <td class="name">{user.name}{user.id === me.value?.id && <span class="hint"> (you)</span>}</td>
                <td class="email">{user.email ?? <span class="hint">—</span>}</td>
                <td class="role-cell">{user.role}</td>
                <td class="status">{user.active ? 'active' : <span class="inactive">deactivated</span>}</td>
                <td class="issuer">{user.issuer ?? <span class="hint">world file</span>}</td>
                <td class="row-actions">
                  <button type="button" disabled={changing.value !== null} onClick={() => void change(user, { active: !user.active })}
                    aria-label={`${user.active ? 'Deactivate' : 'Reactivate'} ${user.name}`}>{user.active ? 'Deactivate' : 'Reactivate'}</button>
                  <button type="button" disabled={changing.value !== null} onClick={() => void change(user, { role: user.role === 'admin' ? 'member' : 'admin' })}
                    aria-label={`Make ${user.name} ${user.role === 'admin' ? 'a member' : 'an admin'}`}>{user.role === 'admin' ? 'Make member' : 'Make admin'}</button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {next.value !== null && <button type="button" class="more" disabled={loadingMore.value} onClick={() => void more()}>More</button>}
      <form class="invite" onSubmit={(event) => void invite(event)}>
        <h3>Invite</h3>
        <p class="hint">An invited email may join at its first sign-in with the identity provider, whatever its domain.</p>
        <div class="fields">
          <div>
            <label for="invite-email">Email</label>
            <input id="invite-email" type="email" required maxLength={254} autocomplete="off" value={email.value}
              onInput={(event) => (email.value = (event.target as HTMLInputElement).value)} />
          </div>
          <button type="submit" disabled={inviting.value}>Invite</button>
        </div>
        {invited.value !== '' && <p role="status" class="done">Invited <span class="invited-email">{invited.value}</span>.</p>}
      </form>
    </section>
  );
}
