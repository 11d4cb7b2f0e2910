/**
 * A new console thread: the route, project, posture and effort pickers filled from the API, and the
 * first directive. The thread's key is made here; its first directive writes the row. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from './api.ts';

interface Postures { readonly agent: string; readonly modes: readonly string[]; readonly default: string | null; readonly efforts: readonly string[] }

export function NewThread({ onCreated }: { onCreated: (threadId: string) => void }) {
  const routes = useSignal<readonly { id: string; agent: string }[]>([]);
  const projects = useSignal<readonly string[]>([]);
  const postures = useSignal<readonly Postures[]>([]);
  const route = useSignal('');
  const project = useSignal('');
  const mode = useSignal('');
  const effort = useSignal('');
  const text = useSignal('');
  const error = useSignal('');
  const busy = useSignal(false);

  useEffect(() => {
    void Promise.all([api.GET('/api/console/routes'), api.GET('/api/console/projects'), api.GET('/api/console/permissions')]).then(([r, p, m]) => {
      routes.value = r.data ?? [];
      projects.value = p.data ?? [];
      postures.value = m.data ?? [];
      route.value = routes.value[0]?.id ?? '';
    });
  }, []);
  const agent = routes.value.find((r) => r.id === route.value)?.agent;
  const offered = postures.value.find((p) => p.agent === agent);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (text.value.trim() === '' || busy.value) return;
    busy.value = true;
    error.value = '';
    const body = {
      text: text.value,
      message_id: crypto.randomUUID(),
      ...(route.value === '' ? {} : { model: route.value }),
      project: project.value === '' ? null : project.value,
      ...(mode.value === '' ? {} : { permission_mode: mode.value }),
      ...(effort.value === '' ? {} : { effort: effort.value }),
    };
    const { data, error: problem, response } = await api.POST('/api/console/threads/{thread}/directives', { params: { path: { thread: crypto.randomUUID() } }, body });
    busy.value = false;
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    onCreated(data.thread_id);
  };
  const select = (id: string, label: string, value: string, set: (v: string) => void, options: readonly string[], none: string) => (
    <label for={id}>
      {label}
      <select id={id} value={value} onChange={(e) => set((e.target as HTMLSelectElement).value)}>
        <option value="">{none}</option>
        {options.map((option) => <option key={option} value={option}>{option}</option>)}
      </select>
    </label>
  );
  return (
    <section class="composer new-thread" aria-label="New thread">
      <h2>New thread</h2>
      <form onSubmit={submit}>
        <div class="pickers">
          {select('route', 'Agent and model', route.value, (v) => (route.value = v), routes.value.map((r) => r.id), 'Default')}
          {select('project', 'Project', project.value, (v) => (project.value = v), projects.value, 'No project')}
          {select('mode', 'Approval posture', mode.value, (v) => (mode.value = v), offered?.modes ?? [], `Default${offered?.default ? ` (${offered.default})` : ''}`)}
          {select('effort', 'Effort', effort.value, (v) => (effort.value = v), offered?.efforts ?? [], 'Default')}
        </div>
        <label for="new-text">Directive</label>
        <textarea id="new-text" rows={4} required value={text.value} onInput={(e) => (text.value = (e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void submit(e); }} />
        <button type="submit" disabled={busy.value}>Start</button>
        <p role="alert" class="error">{error.value}</p>
      </form>
    </section>
  );
}
