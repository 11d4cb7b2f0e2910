/**
 * The automation page's hooks in (`/api/console/hooks`): the caller's list (its URL, where it sends), a new one (a
 * thread, or a new thread's project and route) and removing one. A new hook's secret is shown here once, with how to
 * call it; the page keeps it nowhere else, and the server only its hash. A refusal is shown beside the button that
 * caused it. Browser code.
 */
import { useSignal } from '@preact/signals';
import { api } from './api.ts';
import { useAutomationList } from './automation-list.ts';
import { OptionPicker, ThreadPicker, threadTitle, type AutomationTargets } from './automation-targets.tsx';
import { ConfirmDelete } from './confirm-delete.tsx';

interface Hook {
  readonly id: string;
  readonly thread_id: string | null;
  readonly project: string | null;
  readonly model: string | null;
  readonly url: string;
  readonly created_at: string;
}
type CreatedHook = Hook & { readonly secret: string };

const day = (iso: string) => new Date(iso).toLocaleDateString([], { year: 'numeric', month: 'short', day: 'numeric' });

export function HooksSection({ targets }: { targets: AutomationTargets }) {
  const { items: hooks, listError, createError, rowError, busy, create: send, act } = useAutomationList<Hook>(() => api.GET('/api/console/hooks'));
  const thread = useSignal('');
  const project = useSignal('');
  const model = useSignal('');
  /** The hook just made, with its secret: shown until dismissed, never again. */
  const created = useSignal<CreatedHook | null>(null);

  const create = async (event: Event) => {
    event.preventDefault();
    if (busy.value) return;
    created.value = null;
    const body = thread.value !== ''
      ? { thread_id: thread.value }
      : { project: project.value === '' ? null : project.value, model: model.value === '' ? null : model.value };
    created.value = (await send(() => api.POST('/api/console/hooks', { body }))) ?? null;
  };

  const remove = async (hook: Hook) => {
    const removed = await act(hook.id, () => api.DELETE('/api/console/hooks/{id}', { params: { path: { id: hook.id } } }), true);
    if (removed && created.value?.id === hook.id) created.value = null;
  };

  return (
    <section class="automation-section hooks" aria-labelledby="hooks-title">
      <h3 id="hooks-title">Hooks</h3>
      <p class="hint">A hook lets another service (CI, a monitor) send a directive as you: it POSTs <code>{'{"text"}'}</code> to the hook's URL with the hook's secret.</p>
      {listError.value !== '' && <p role="alert" class="error">{listError.value}</p>}
      {created.value !== null && (
        <div class="new-hook new-token" role="status">
          <p>Your new hook's URL: <code class="url">{created.value.url}</code></p>
          <p>Its secret:</p>
          <p><code class="secret">{created.value.secret}</code></p>
          <p class="warning">Copy it now: it will not be shown again.</p>
          <p class="hint">Call it with <code>curl -X POST {created.value.url} -H 'Authorization: Bearer &lt;secret&gt;' -H 'Content-Type: application/json' -d '{'{"text": "…"}'}'</code></p>
          <button type="button" onClick={() => (created.value = null)}>Done</button>
        </div>
      )}
      {hooks.value === null ? <p class="hint">Loading…</p> : hooks.value.length === 0 ? <p class="empty">You have no hooks.</p> : (
        <table class="data-table">
          <thead>
            <tr><th scope="col">URL</th><th scope="col">Sends to</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr>
          </thead>
          <tbody>
            {hooks.value.map((hook) => (
              <tr key={hook.id} data-hook-id={hook.id}>
                <td class="url"><code>{hook.url}</code></td>
                <td class="target">
                  {hook.thread_id !== null
                    ? <a href={`#/threads/${hook.thread_id}`}>{threadTitle(targets, hook.thread_id)}</a>
                    : <span>New thread{hook.project !== null && ` in ${hook.project}`}{hook.model !== null && ` (${hook.model})`}</span>}
                </td>
                <td><time dateTime={hook.created_at} title={hook.created_at}>{day(hook.created_at)}</time></td>
                <td class="row-actions">
                  <ConfirmDelete label={`Delete hook ${hook.id}`} onDelete={() => void remove(hook)} />
                  {(rowError.value[hook.id] ?? '') !== '' && <span role="alert" class="error">{rowError.value[hook.id]}</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form class="automation-form new-hook-form" onSubmit={(event) => void create(event)}>
        <h4>New hook</h4>
        <div class="fields">
          <ThreadPicker id="hook-thread" value={thread.value} set={(v) => (thread.value = v)} targets={targets} />
          {thread.value === '' && <OptionPicker id="hook-project" label="Project" value={project.value} set={(v) => (project.value = v)} options={targets.projects} none="No project" />}
          {thread.value === '' && <OptionPicker id="hook-model" label="Agent and model" value={model.value} set={(v) => (model.value = v)} options={targets.routes} none="Default" />}
        </div>
        <div class="actions">
          <button type="submit" disabled={busy.value}>Create hook</button>
          {createError.value !== '' && <span role="alert" class="error">{createError.value}</span>}
        </div>
      </form>
    </section>
  );
}
