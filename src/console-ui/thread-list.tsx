/**
 * The thread list, paged as the API pages it (newest first), with each thread's activity: the open
 * thread's from its live events when they are newer than the read, the others' read again when another
 * thread is opened and every half minute while the page is seen. Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { shownActivity, type Activity, type LiveActivity } from './activity.ts';
import { api, problemText } from './api.ts';

interface ThreadRow {
  readonly id: string;
  readonly title: string;
  readonly channel: string;
  readonly project: string | null;
  readonly activity: Activity;
}

/** Runs start and end on threads not open here too (another tab, a chat channel); no socket tells of those. */
const REREAD_MS = 30_000;

/** Words for what is going on in a thread, or nothing. */
function activityText(activity: Activity): string {
  const parts = [
    activity.turn_running ? 'running' : null,
    activity.approvals > 0 ? `${activity.approvals} to approve` : null,
    activity.questions > 0 ? `${activity.questions} to answer` : null,
    activity.queued > 0 ? `${activity.queued} queued` : null,
  ];
  return parts.filter((part) => part !== null).join(', ');
}

export function ThreadList({ selected, refresh, live }: { selected: string | null; refresh: number; live: ReadonlyMap<string, LiveActivity> }) {
  const threads = useSignal<readonly ThreadRow[]>([]);
  const next = useSignal<string | null>(null);
  const error = useSignal('');
  /** When the newest read of the first rows started: live activity from before it is older news. */
  const readAt = useSignal(0);
  const load = async (before: string | null) => {
    const started = Date.now();
    // A read again covers the rows already shown, so older pages stay.
    const limit = String(Math.min(200, Math.max(30, before === null ? threads.value.length : 0)));
    const { data, error: problem, response } = await api.GET('/api/console/threads', { params: { query: { limit, ...(before === null ? {} : { before }) } } });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    // Reads may cross (a timer's and a click's): an answer older than the one shown changes nothing.
    if (before === null && started < readAt.value) return;
    error.value = '';
    threads.value = before === null ? data.items : [...threads.value, ...data.items];
    if (before === null) readAt.value = started;
    next.value = data.next;
  };
  useEffect(() => void load(null), [refresh, selected]);
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load(null);
    }, REREAD_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <nav class="threads" aria-label="Threads">
      <a class="new" href="#/new">New thread</a>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      <ul>
        {threads.value.map((thread) => {
          const activity = shownActivity(thread.activity, live.get(thread.id), readAt.value);
          return (
            <li key={thread.id}>
              <a href={`#/threads/${thread.id}`} aria-current={thread.id === selected ? 'page' : undefined} data-thread-id={thread.id}>
                <span class="title">{thread.title}</span>
                <span class="meta">{thread.channel}{thread.project === null ? '' : ` · ${thread.project}`}</span>
                {activityText(activity) !== '' && <span class="activity" data-running={activity.turn_running ? 'true' : 'false'}>{activityText(activity)}</span>}
              </a>
            </li>
          );
        })}
      </ul>
      {next.value !== null && <button type="button" onClick={() => void load(next.value)}>Older threads</button>}
    </nav>
  );
}
