/** The thread list, paged as the API pages it (newest first). Browser code. */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { api, problemText } from './api.ts';

interface ThreadRow {
  readonly id: string;
  readonly title: string;
  readonly channel: string;
  readonly project: string | null;
  readonly activity: { readonly turn_running: boolean; readonly approvals: number; readonly questions: number };
}

/** Words for what is going on in a thread, or nothing. */
function activityText({ activity }: ThreadRow): string {
  const parts = [activity.turn_running ? 'running' : null, activity.approvals > 0 ? `${activity.approvals} to approve` : null, activity.questions > 0 ? `${activity.questions} to answer` : null];
  return parts.filter((part) => part !== null).join(', ');
}

export function ThreadList({ selected, refresh }: { selected: string | null; refresh: number }) {
  const threads = useSignal<readonly ThreadRow[]>([]);
  const next = useSignal<string | null>(null);
  const error = useSignal('');
  const load = async (before: string | null) => {
    const { data, error: problem, response } = await api.GET('/api/console/threads', { params: { query: { limit: '30', ...(before === null ? {} : { before }) } } });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    threads.value = before === null ? data.items : [...threads.value, ...data.items];
    next.value = data.next;
  };
  useEffect(() => void load(null), [refresh]);
  return (
    <nav class="threads" aria-label="Threads">
      <a class="new" href="#/new">New thread</a>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      <ul>
        {threads.value.map((thread) => (
          <li key={thread.id}>
            <a href={`#/threads/${thread.id}`} aria-current={thread.id === selected ? 'page' : undefined} data-thread-id={thread.id}>
              <span class="title">{thread.title}</span>
              <span class="meta">{thread.channel}{thread.project === null ? '' : ` · ${thread.project}`}</span>
              {activityText(thread) !== '' && <span class="activity" data-running={thread.activity.turn_running ? 'true' : 'false'}>{activityText(thread)}</span>}
            </a>
          </li>
        ))}
      </ul>
      {next.value !== null && <button type="button" onClick={() => void load(next.value)}>Older threads</button>}
    </nav>
  );
}
