/**
 * A thread's Changes (contract section 8), for a thread whose project is a git repository: the files its
 * worktree changed against the base (status, +/- counts), the diff of the one selected (drawn as text from
 * the unified diff, see diff-rows.ts), comments on its lines collected into a review and sent as the next
 * directive ("Send review": queued when a turn runs), and Merge with its strategy and an optional message;
 * a conflict shows its files, another refusal its words beside the button that was refused. Browser code.
 */
import { useSignal } from '@preact/signals';
import { Fragment } from 'preact';
import { useEffect } from 'preact/hooks';
import type { Schemas } from '../../client/index.ts';
import { api, problemText } from './api.ts';
import { diffRows, type DiffRow } from './diff-rows.ts';

interface ChangedFile {
  readonly path: string;
  readonly status: string;
  readonly old_path?: string;
  readonly additions: number;
  readonly deletions: number;
  readonly binary: boolean;
}
interface Changes {
  readonly base: string;
  readonly branch: string;
  readonly ahead: number;
  readonly behind: number;
  readonly uncommitted: number;
  readonly files: readonly ChangedFile[];
}
export interface ReviewComment {
  readonly path: string;
  readonly line: number;
  readonly text: string;
}

/** One line of the diff: its numbers, its text, and (on a line of the worktree's file) the button that comments on it. */
function DiffLine({ path, row, comments, drafting, onComment }: {
  path: string;
  row: DiffRow;
  comments: readonly ReviewComment[];
  drafting: boolean;
  onComment: (line: number) => void;
}) {
  const sign = row.kind === 'added' ? '+' : row.kind === 'deleted' ? '-' : row.kind === 'context' ? ' ' : '';
  return (
    <>
      <tr class={`diff-row ${row.kind}`} data-new-line={row.new ?? undefined}>
        <td class="num">{row.old ?? ''}</td>
        <td class="num">
          {row.new === null ? '' : (
            <button type="button" class="line-comment" aria-label={`Comment on ${path} line ${row.new}`} aria-pressed={drafting} onClick={() => onComment(row.new!)}>{row.new}</button>
          )}
        </td>
        <td class="code"><span class="sign">{sign}</span>{row.text}</td>
      </tr>
      {comments.map((comment, i) => (
        <tr key={i} class="comment-row"><td colSpan={3}><p class="comment"><span class="role">Your comment on line {comment.line}</span>{comment.text}</p></td></tr>
      ))}
    </>
  );
}

export function ChangesView({ threadId, version, onProblem }: { threadId: string; version: number; onProblem: (text: string) => void }) {
  const open = useSignal(false);
  const changes = useSignal<Changes | null>(null);
  const selected = useSignal<string | null>(null);
  const rows = useSignal<readonly DiffRow[] | null>(null);
  const comments = useSignal<readonly ReviewComment[]>([]);
  const draft = useSignal<{ path: string; line: number; text: string } | null>(null);
  const reviewText = useSignal('');
  const strategy = useSignal<'squash' | 'merge'>('squash');
  const message = useSignal('');
  const conflicts = useSignal<readonly string[]>([]);
  const status = useSignal('');
  const busy = useSignal(false);
  /** Why the last review or merge was refused, said beside its button. */
  const reviewError = useSignal('');
  const mergeError = useSignal('');

  const load = async () => {
    const { data, error, response } = await api.GET('/api/console/threads/{id}/changes', { params: { path: { id: threadId } } });
    if (data === undefined) return onProblem(problemText(error, response.status));
    changes.value = data;
    if (selected.value !== null && !data.files.some((file) => file.path === selected.value)) {
      selected.value = null;
      rows.value = null;
    } else if (selected.value !== null) await show(selected.value);
  };
  const show = async (path: string) => {
    // Another file's rows are never drawn under this one's name while its diff is read.
    if (selected.value !== path) rows.value = null;
    selected.value = path;
    const { data, error, response } = await api.GET('/api/console/threads/{id}/changes/diff', { params: { path: { id: threadId }, query: { path } }, parseAs: 'text' });
    if (data === undefined) return onProblem(problemText(error, response.status));
    if (selected.value === path) rows.value = diffRows(data);
  };
  useEffect(() => {
    if (open.value) void load();
  }, [open.value, version, threadId]);

  const addComment = (event: Event) => {
    event.preventDefault();
    const current = draft.value;
    if (current === null || current.text.trim() === '') return;
    comments.value = [...comments.value, { path: current.path, line: current.line, text: current.text }];
    draft.value = null;
  };
  const sendReview = async () => {
    if (comments.value.length === 0 || busy.value) return;
    busy.value = true;
    status.value = '';
    reviewError.value = '';
    const body = { comments: [...comments.value], text: reviewText.value.trim() === '' ? null : reviewText.value, message_id: crypto.randomUUID(), when_busy: 'queue' as const };
    const { error, response } = await api.POST('/api/console/threads/{id}/changes/review', { params: { path: { id: threadId } }, body });
    busy.value = false;
    if (!response.ok) return void (reviewError.value = problemText(error, response.status));
    status.value = `Review sent: ${comments.value.length} comment${comments.value.length === 1 ? '' : 's'}.`;
    comments.value = [];
    reviewText.value = '';
  };
  const merge = async (event: Event) => {
    event.preventDefault();
    if (busy.value) return;
    busy.value = true;
    status.value = '';
    conflicts.value = [];
    mergeError.value = '';
    const body = { strategy: strategy.value, message: message.value.trim() === '' ? null : message.value };
    const { data, error, response } = await api.POST('/api/console/threads/{id}/changes/merge', { params: { path: { id: threadId } }, body });
    busy.value = false;
    if (data === undefined) {
      const problem = error as Schemas['Problem'] | undefined;
      if (problem?.code === 'merge_conflict') return void (conflicts.value = problem.files ?? []);
      return void (mergeError.value = problemText(error, response.status));
    }
    status.value = `Merged into ${data.base} at ${data.commit.slice(0, 12)}.`;
    message.value = '';
    await load();
  };

  const current = changes.value;
  const path = selected.value;
  return (
    <section class="changes" aria-labelledby="changes-title">
      <header>
        <h3 id="changes-title">
          <button type="button" aria-expanded={open.value} onClick={() => (open.value = !open.value)}>Changes</button>
        </h3>
        {open.value && current !== null && (
          <p class="meta">
            {current.branch} · {current.ahead} commit{current.ahead === 1 ? '' : 's'} ahead, {current.behind} behind {current.base}
            {current.uncommitted > 0 && <> · <span class="uncommitted">{current.uncommitted} file{current.uncommitted === 1 ? '' : 's'} changed, not committed</span></>}
          </p>
        )}
        {open.value && <button type="button" onClick={() => void load()}>Refresh</button>}
      </header>
      {open.value && current !== null && (
        <>
          {current.files.length === 0 ? <p class="hint">No changes against {current.base}.</p> : (
            <ul class="files" aria-label="Changed files">
              {current.files.map((file) => (
                <li key={file.path}>
                  <button type="button" aria-current={file.path === path ? 'true' : undefined} onClick={() => void show(file.path)}>
                    <span class={`status ${file.status}`}>{file.status}</span>
                    <span class="path">{file.old_path === undefined ? file.path : `${file.old_path} → ${file.path}`}</span>
                    {file.binary ? <span class="counts">binary</span> : <span class="counts"><span class="added">+{file.additions}</span> <span class="deleted">-{file.deletions}</span></span>}
                  </button>
                </li>
              ))}
            </ul>
          )}
          {path !== null && rows.value !== null && (
            <figure class="file-diff">
              <figcaption>{path}</figcaption>
              {rows.value.length === 0 ? <p class="hint">No text to show (a binary file, or a change of mode only).</p> : (
                <table aria-label={`Diff of ${path}`}>
                  <tbody>
                    {rows.value.map((row, i) => (
                      <Fragment key={i}>
                        <DiffLine path={path} row={row} drafting={draft.value?.path === path && draft.value.line === row.new}
                          comments={row.new === null ? [] : comments.value.filter((c) => c.path === path && c.line === row.new)}
                          onComment={(line) => (draft.value = { path, line, text: '' })} />
                        {draft.value !== null && draft.value.path === path && row.new !== null && draft.value.line === row.new && (
                          <tr class="comment-row">
                            <td colSpan={3}>
                              <form class="line-comment-form" onSubmit={addComment}>
                                <label for="line-comment-text">Comment on line {row.new}</label>
                                <textarea id="line-comment-text" rows={2} value={draft.value.text}
                                  onInput={(e) => (draft.value = { ...draft.value!, text: (e.target as HTMLTextAreaElement).value })} />
                                <div class="actions">
                                  <button type="submit" disabled={draft.value.text.trim() === ''}>Add comment</button>
                                  <button type="button" onClick={() => (draft.value = null)}>Cancel comment</button>
                                </div>
                              </form>
                            </td>
                          </tr>
                        )}
                      </Fragment>
                    ))}
                  </tbody>
                </table>
              )}
            </figure>
          )}
          <div class="review">
            <h4>Review</h4>
            {comments.value.length === 0 ? <p class="hint">Click a line number in a diff to comment on it.</p> : (
              <ol aria-label="Review comments">
                {comments.value.map((comment, i) => (
                  <li key={i}>
                    <span class="where">{comment.path}:{comment.line}</span> {comment.text}{' '}
                    <button type="button" onClick={() => (comments.value = comments.value.filter((_, j) => j !== i))}>Remove</button>
                  </li>
                ))}
              </ol>
            )}
            <label for="review-text">Review note (optional)</label>
            <textarea id="review-text" rows={2} value={reviewText.value} onInput={(e) => (reviewText.value = (e.target as HTMLTextAreaElement).value)} />
            <div class="actions">
              <button type="button" disabled={busy.value || comments.value.length === 0} onClick={() => void sendReview()}>Send review</button>
              {reviewError.value !== '' && <span role="alert" class="error">{reviewError.value}</span>}
            </div>
          </div>
          <form class="merge" onSubmit={merge}>
            <h4>Merge into {current.base}</h4>
            <label for="merge-strategy">Strategy
              <select id="merge-strategy" value={strategy.value} onChange={(e) => (strategy.value = (e.target as HTMLSelectElement).value as 'squash' | 'merge')}>
                <option value="squash">squash</option>
                <option value="merge">merge</option>
              </select>
            </label>
            <label for="merge-message">Commit message (optional)</label>
            <input id="merge-message" type="text" value={message.value} onInput={(e) => (message.value = (e.target as HTMLInputElement).value)} />
            <div class="actions">
              <button type="submit" disabled={busy.value || current.files.length === 0}
                title={current.files.length === 0 ? `Nothing to merge: the worktree holds what ${current.base} has` : undefined}>Merge</button>
              {current.files.length === 0 && <span class="hint">Nothing to merge.</span>}
              {mergeError.value !== '' && <span role="alert" class="error">{mergeError.value}</span>}
            </div>
          </form>
          {conflicts.value.length > 0 && (
            <div role="alert" class="conflicts">
              <p class="error">The changes conflict with {current.base}; nothing was merged. Conflicting files:</p>
              <ul aria-label="Conflicting files">{conflicts.value.map((file) => <li key={file}>{file}</li>)}</ul>
            </div>
          )}
          {status.value !== '' && <p role="status" class="done">{status.value}</p>}
        </>
      )}
    </section>
  );
}
