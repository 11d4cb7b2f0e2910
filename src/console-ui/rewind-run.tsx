/**
 * "Rewind to before this" on a run's card, for the thread's owner: asks first, then
 * `POST /threads/{id}/rewind` takes the run and every later one back (kept, drawn rewound) and puts a
 * repository thread's files back to before it. Offered only while nothing runs or waits (the route refuses
 * then); a refusal is shown beside the button. Browser code.
 */
import { useSignal } from '@preact/signals';
import { api, problemText } from './api.ts';

export function RewindRun({ threadId, runId, ready, onRewound }: {
  threadId: string;
  runId: string;
  /** No turn runs and nothing is queued on the thread. */
  ready: boolean;
  /** The rewind was done: the run and the later ones read rewound (the `rewound` event says so too). */
  onRewound: (runId: string) => void;
}) {
  const confirming = useSignal(false);
  const busy = useSignal(false);
  const error = useSignal('');

  const rewind = async () => {
    confirming.value = false;
    busy.value = true;
    error.value = '';
    const { error: problem, response } = await api.POST('/api/console/threads/{id}/rewind', { params: { path: { id: threadId } }, body: { run_id: runId } });
    busy.value = false;
    if (!response.ok) return void (error.value = problemText(problem, response.status));
    onRewound(runId);
  };

  return (
    <span class="rewind">
      {confirming.value && ready ? (
        <span class="confirm" role="group" aria-label="Rewind to before this run?">
          <span>Take this run and every later one back?</span>
          <button type="button" class="danger" onClick={() => void rewind()}>Yes, rewind</button>
          <button type="button" onClick={() => (confirming.value = false)}>Cancel</button>
        </span>
      ) : (
        <button type="button" disabled={!ready || busy.value} onClick={() => (confirming.value = true)}
          title={ready ? 'Takes this run and every later one back; a repository thread gets its files back as they were before it' : 'Not while a turn runs or a message waits'}>
          Rewind to before this
        </button>
      )}
      {error.value !== '' && <span class="error" role="alert">{error.value}</span>}
    </span>
  );
}
