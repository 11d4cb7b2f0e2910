/*
 * The console page's script: browser code, bundled by esbuild for `GET /assets/console.js`. A signed-out
 * visitor gets the sign-in form; then the thread list beside the open thread (`#/threads/<id>`) or the
 * new-thread composer (`#/new`), the caller's chat links (`#/links`), personal access tokens (`#/tokens`) or
 * schedules and hooks (`#/automation`), or, for an admin, the users (`#/admin`).
 */
import { signal } from '@preact/signals';
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import type { Activity, LiveActivity } from './activity.ts';
import { AccessTokens } from './access-tokens.tsx';
import { Automation } from './automation.tsx';
import { AdminUsers } from './admin-users.tsx';
import { api } from './api.ts';
import { ChatLinks } from './chat-links.tsx';
import { NewThread } from './new-thread.tsx';
import { me, signedOut } from './session.ts';
import { SignIn } from './sign-in.tsx';
import { ThreadList } from './thread-list.tsx';
import { ThreadView } from './thread-view.tsx';

const route = signal(location.hash);
const listVersion = signal(0);
/** The thread the list last renamed, for the open thread's heading. */
const renamed = signal<{ readonly id: string; readonly title: string } | null>(null);
/** Each thread opened here: its activity as its live events last left it, which the list shows when newer than its read. */
const liveActivity = signal<ReadonlyMap<string, LiveActivity>>(new Map());
const onActivity = (thread: string, activity: Activity) => {
  liveActivity.value = new Map(liveActivity.value).set(thread, { activity, at: Date.now() });
};
window.addEventListener('hashchange', () => (route.value = location.hash));

const whoAmI = async () => {
  const { data } = await api.GET('/api/session').catch(() => ({ data: undefined }));
  me.value = data ?? null;
};

function App() {
  useEffect(() => void whoAmI(), []);
  if (me.value === undefined) return <p class="loading">Loading…</p>;
  if (me.value === null) return <SignIn demoToken={document.documentElement.dataset.demoToken ?? null} oidcName={document.documentElement.dataset.oidcName ?? null} onSignedIn={() => void whoAmI()} />;
  const threadId = /^#\/threads\/([0-9a-f-]{36})$/i.exec(route.value)?.[1] ?? null;
  const isAdmin = me.value.role === 'admin';
  const signOut = async () => {
    await api.DELETE('/api/session');
    signedOut();
  };
  return (
    <div class="layout">
      <header class="top">
        <h1>Agent console</h1>
        <span class="who">{me.value.name}</span>
        <a href="#/links" aria-current={route.value === '#/links' ? 'page' : undefined}>Chat links</a>
        <a href="#/tokens" aria-current={route.value === '#/tokens' ? 'page' : undefined}>Tokens</a>
        <a href="#/automation" aria-current={route.value === '#/automation' ? 'page' : undefined}>Automation</a>
        {isAdmin && <a href="#/admin" aria-current={route.value === '#/admin' ? 'page' : undefined}>Admin</a>}
        <button type="button" onClick={() => void signOut()}>Sign out</button>
      </header>
      <ThreadList selected={threadId} refresh={listVersion.value} live={liveActivity.value} user={me.value.id} onRenamed={(thread) => (renamed.value = thread)} />
      <main>
        {route.value === '#/links' ? <ChatLinks />
          : route.value === '#/tokens' ? <AccessTokens />
          : route.value === '#/automation' ? <Automation />
          : route.value === '#/admin' && isAdmin ? <AdminUsers />
          : threadId !== null ? <ThreadView id={threadId} renamed={renamed.value} onActivity={onActivity} onOpened={(id) => { listVersion.value += 1; location.hash = `#/threads/${id}`; }} /> : <NewThread onCreated={(id) => { listVersion.value += 1; location.hash = `#/threads/${id}`; }} />}
      </main>
    </div>
  );
}

render(<App />, document.getElementById('console')!);
