/**
 * The thread list, paged as the API pages it (newest first), with each thread's activity: the open
 * thread's from its live events when they are newer than the read, the others' read again when another
 * thread is opened and every half minute while the page is seen. A search box (`q`) and a "show archived"
 * toggle narrow it; each thread of the caller's can be renamed in place, archived and brought back
 * (`PATCH /threads/{id}`, contract section 4, "Managing threads"). Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { shownActivity, type Activity, type LiveActivity } from './activity.ts';
import { api, problemText } from './api.ts';

interface ThreadRow {
  readonly id: string;
  readonly title: string;
  readonly owner: string;
  readonly archived: boolean;
  readonly channel: string;
  readonly project: string | null;
  readonly activity: Activity;
}

/** Runs start and end on threads not open here too (another tab, a chat channel); no socket tells of those. */
const REREAD_MS = 30_000;

/** How long typing in the search box pauses before the list is read again. */
const SEARCH_PAUSE_MS = 250;

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

/** A thread's title, edited in place: Enter or leaving the field saves it, Escape gives up. */
function TitleEditor({ thread, done }: { thread: ThreadRow; done: (title: string | null) => void }) {
  const draft = useSignal(thread.title);
  // Enter, then the blur of the field leaving the page: one answer.
  const settled = useRef(false);
  const settle = (title: string | null) => {
    if (settled.current) return;
    settled.current = true;
    done(title);
  };
  return (
    <input
      class="rename" aria-label={`New title for ${thread.title}`} value={draft.value} maxLength={200} autoFocus
      onInput={(event) => (draft.value = event.currentTarget.value)}
      onKeyDown={(event) => {
        if (event.key === 'Enter') settle(draft.value);
        if (event.key === 'Escape') settle(null);
      }}
      onBlur={() => settle(draft.value)}
    />
  );
}

/** `onRenamed`: a thread's new title, for the open thread's heading. */
export function ThreadList({ selected, refresh, live, user, onRenamed }: {
  selected: string | null; refresh: number; live: ReadonlyMap<string, LiveActivity>; user: string | null; onRenamed?: (thread: { id: string; title: string }) => void;
}) {
  const threads = useSignal<readonly ThreadRow[]>([]);
  const next = useSignal<string | null>(null);
  const error = useSignal('');
  const search = useSignal('');
  const archived = useSignal(false);
  /** The thread whose title is being edited, or null. */
  const editing = useSignal<string | null>(null);
  /** When the newest read of the first rows started: live activity from before it is older news. */
  const readAt = useSignal(0);
  const load = async (before: string | null) => {
    const started = Date.now();
    // A read again covers the rows already shown, so older pages stay.
    const limit = String(Math.min(200, Math.max(30, before === null ? threads.value.length : 0)));
    const filter = { ...(archived.value ? { archived: 'true' as const } : {}), ...(search.value.trim() === '' ? {} : { q: search.value }) };
    const { data, error: problem, response } = await api.GET('/api/console/threads', { params: { query: { limit, ...filter, ...(before === null ? {} : { before }) } } });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    // Reads may cross (a timer's and a click's): an answer older than the one shown changes nothing.
    if (before === null && started < readAt.value) return;
    error.value = '';
    threads.value = before === null ? data.items : [...threads.value, ...data.items];
    if (before === null) readAt.value = started;
    next.value = data.next;
  };
  useEffect(() => void load(null), [refresh, selected, archived.value]);
  // Typing searches once it pauses (the first render's read is the one above).
  const typed = useRef(false);
  useEffect(() => {
    if (!typed.current) return void (typed.current = true);
    const timer = setTimeout(() => void load(null), SEARCH_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [search.value]);
  /** Renames or archives a thread, then reads the list again (an archived thread leaves it). */
  const edit = async (thread: ThreadRow, changes: { title?: string; archived?: boolean }) => {
    const { data, error: problem, response } = await api.PATCH('/api/console/threads/{id}', { params: { path: { id: thread.id } }, body: changes });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    if (changes.title !== undefined) onRenamed?.({ id: data.id, title: data.title });
    await load(null);
  };
  const renamed = (thread: ThreadRow) => (title: string | null) => {
    editing.value = null;
    if (title !== null && title.trim() !== '' && title.trim() !== thread.title) void edit(thread, { title: title.trim() });
  };
  useEffect(() => {
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') void load(null);
    }, REREAD_MS);
    return () => clearInterval(timer);
  }, []);
  return (
    <nav class="threads" aria-label="Threads">
      <a class="new" href="#/new">New thread</a>
      <input type="search" class="search" aria-label="Search threads" placeholder="Search threads" maxLength={200}
        value={search.value} onInput={(event) => (search.value = event.currentTarget.value)} />
      <label class="archived"><input type="checkbox" checked={archived.value} onChange={(event) => (archived.value = event.currentTarget.checked)} /> Show archived</label>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      <ul>
        {threads.value.map((thread) => {
          const activity = shownActivity(thread.activity, live.get(thread.id), readAt.value);
          return (
            <li key={thread.id} data-thread-id={thread.id}>
              {editing.value === thread.id && <TitleEditor thread={thread} done={renamed(thread)} />}
              <a href={`#/threads/${thread.id}`} aria-current={thread.id === selected ? 'page' : undefined} data-thread-id={thread.id}>
                {editing.value !== thread.id && <span class="title">{thread.title}</span>}
                <span class="meta">{thread.channel}{thread.project === null ? '' : ` · ${thread.project}`}</span>
                {activityText(activity) !== '' && <span class="activity" data-running={activity.turn_running ? 'true' : 'false'}>{activityText(activity)}</span>}
              </a>
              {thread.owner === user && (
                <span class="manage">
                  <button type="button" aria-label={`Rename ${thread.title}`} onClick={() => (editing.value = thread.id)}>Rename</button>
                  <button type="button" aria-label={`${thread.archived ? 'Unarchive' : 'Archive'} ${thread.title}`} onClick={() => void edit(thread, { archived: !thread.archived })}>
                    {thread.archived ? 'Unarchive' : 'Archive'}
                  </button>
                </span>
              )}
            </li>
          );
        })}
      </ul>
      {next.value !== null && <button type="button" onClick={() => void load(next.value)}>Older threads</button>}
    </nav>
  );
}
