/**
 * A thread's queued follow-ups, under the running run: the next to run first, each editable in place and
 * removable by its author or the thread's owner until it starts (`PATCH`/`DELETE /threads/{id}/queue/{item}`).
 * What is shown follows the thread's `queued` and `dequeued` events; the answers here only say what failed.
 * Browser code.
 */
import { useSignal } from '@preact/signals';
import { api, problemText } from './api.ts';
import { OriginLabel, type ScheduleCrons } from './origin-label.tsx';
import type { QueuedView } from './timeline.ts';

function QueuedItem({ threadId, item, position, mine, canChange, crons, onProblem }: {
  threadId: string;
  item: QueuedView;
  position: number;
  mine: boolean;
  canChange: boolean;
  crons: ScheduleCrons;
  onProblem: (text: string) => void;
}) {
  const editing = useSignal<string | null>(null);
  const busy = useSignal(false);
  const path = { path: { id: threadId, item: item.id } };

  const save = async (event: Event) => {
    event.preventDefault();
    const text = editing.value;
    if (text === null || text.trim() === '' || busy.value) return;
    busy.value = true;
    const { data, error, response } = await api.PATCH('/api/console/threads/{id}/queue/{item}', { params: path, body: { text } });
    busy.value = false;
    if (data === undefined) return onProblem(problemText(error, response.status));
    editing.value = null;
  };
  const remove = async () => {
    busy.value = true;
    const { error, response } = await api.DELETE('/api/console/threads/{id}/queue/{item}', { params: path });
    busy.value = false;
    if (!response.ok) onProblem(problemText(error, response.status));
  };

  return (
    <li data-queue-id={item.id} aria-label={`Queued ${position}`}>
      <span class="role">Queued {position} · {mine ? 'you' : item.author}</span>
      <OriginLabel origin={item.origin} crons={crons} />
      {editing.value === null ? (
        <>
          <p>{item.text}</p>
          {canChange && (
            <div class="actions">
              <button type="button" disabled={busy.value} onClick={() => (editing.value = item.text)}>Edit</button>
              <button type="button" disabled={busy.value} onClick={() => void remove()}>Remove</button>
            </div>
          )}
        </>
      ) : (
        <form onSubmit={save}>
          <label for={`queued-${item.id}`}>Queued message</label>
          <textarea id={`queued-${item.id}`} rows={2} value={editing.value} onInput={(e) => (editing.value = (e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void save(e); }} />
          <div class="actions">
            <button type="submit" disabled={busy.value || editing.value.trim() === ''}>Save</button>
            <button type="button" onClick={() => (editing.value = null)}>Cancel edit</button>
          </div>
        </form>
      )}
    </li>
  );
}

/** The queue, or nothing when it is empty; `viewer` and `owner` decide who may change an item. */
export function QueueList({ threadId, items, viewer, owner, crons = null, onProblem }: {
  threadId: string;
  items: readonly QueuedView[];
  viewer: string | null;
  owner: string | null;
  /** The viewer's schedules' expressions, for an item's origin label. */
  crons?: ScheduleCrons;
  onProblem: (text: string) => void;
}) {
  if (items.length === 0) return null;
  return (
    <section class="queue" aria-labelledby="queue-title">
      <h3 id="queue-title">Queued to run next</h3>
      <ol aria-label="Queued messages">
        {items.map((item, index) => (
          <QueuedItem key={item.id} threadId={threadId} item={item} position={index + 1} mine={viewer !== null && item.author === viewer}
            canChange={viewer !== null && (item.author === viewer || owner === viewer)} crons={crons} onProblem={onProblem} />
        ))}
      </ol>
    </section>
  );
}
