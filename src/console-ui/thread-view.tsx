/**
 * One thread: its ledger (older pages on demand), its runs live over the socket (replayed from the first
 * event, so a reload loses nothing), pending approvals and questions with their options, the posture
 * switch, cancel, the follow-ups queued while a turn runs, and the composer that continues it: Send runs
 * the message now on an idle thread and queues it on a busy one (`when_busy: "queue"`); "Interrupt and
 * send" cancels the running turn and runs it next (`"interrupt"`); "Steer", offered while a turn runs when
 * the conversation's agent steers (GET /permissions says which do) and the turn asks nothing, sends it into
 * the running turn (`"steer"`; queued where it does not go). "Fork from here" on each message opens a
 * thread of the caller's that sees the ledger up to it; a fork shows where it was forked from. "Rewind to
 * before this" on each run, for the owner while nothing runs or waits, takes it and the later runs back
 * (drawn rewound, as the `rewound` event names them). Browser code.
 */
import { useSignal } from '@preact/signals';
import { useEffect } from 'preact/hooks';
import { AgentText } from './agent-text.tsx';
import { activityOf, sameActivity, type Activity } from './activity.ts';
import { api, followThread, problemText } from './api.ts';
import { ChangesView } from './changes-view.tsx';
import { InlineApp } from './inline-app.tsx';
import { Moves } from './moves.tsx';
import { OriginLabel, type ScheduleCrons } from './origin-label.tsx';
import { QueueList } from './queue-list.tsx';
import { RewindRun } from './rewind-run.tsx';
import { PendingCard, RunCard } from './run-card.tsx';
import { me } from './session.ts';
import { threadEntries } from './thread-entries.ts';
import { applyEvent, EMPTY_TIMELINE, runningRun, withMessages, withoutPending, withQueue, withRewound, type PendingView, type QueuedView, type RunView, type Timeline } from './timeline.ts';

interface ConversationRow {
  readonly id: string;
  readonly agent: string;
  readonly model: string | null;
  readonly permission_mode: string | null;
  readonly turn_running: boolean;
  /** Where a teleport moved it: the thread it continues in. */
  readonly moved_to: { readonly thread_id: string; readonly address: { readonly channel: string; readonly id: string } } | null;
}

/** A fork's lineage: the thread it was forked from (its title when the caller can still read it) and the message it was cut at. */
interface Lineage {
  readonly thread_id: string;
  readonly title: string | null;
  readonly message_id: string | null;
}

/** `onOpened`: a thread this one opened (a move's landing, a fork) is to be shown; `renamed`: the last thread the list renamed. */
export function ThreadView({ id, onOpened, onActivity, renamed }: { id: string; onOpened: (threadId: string) => void; onActivity: (threadId: string, activity: Activity) => void; renamed?: { readonly id: string; readonly title: string } | null }) {
  const title = useSignal('');
  useEffect(() => {
    if (renamed?.id === id) title.value = renamed.title;
  }, [renamed, id]);
  const lineage = useSignal<Lineage | null>(null);
  const forking = useSignal(false);
  const meta = useSignal('');
  const owner = useSignal<string | null>(null);
  /** Whether the thread works in a git worktree of its own (a repository project): then it has Changes. */
  const worktree = useSignal(false);
  const timeline = useSignal<Timeline>(EMPTY_TIMELINE);
  /** The viewer's schedules' expressions, read once a directive from a schedule shows: its label names the cron. */
  const crons = useSignal<ScheduleCrons>(null);
  const fromSchedule = timeline.value.messages.some((m) => m.origin?.kind === 'schedule') || timeline.value.queue.some((q) => q.origin?.kind === 'schedule');
  useEffect(() => {
    if (!fromSchedule || crons.value !== null) return;
    crons.value = {};
    void api.GET('/api/console/schedules').then(({ data }) => (crons.value = Object.fromEntries((data ?? []).map((s) => [s.id, s.cron]))));
  }, [fromSchedule]);
  const older = useSignal<string | null>(null);
  const conversation = useSignal<ConversationRow | null>(null);
  const modes = useSignal<readonly string[]>([]);
  /** Whether the conversation's agent takes messages into its running turn (`when_busy: "steer"`). */
  const steering = useSignal(false);
  /** What the last Steer came to, said beside the composer until the next send. */
  const steerNote = useSignal('');
  /** Why the last send was refused, said beside the composer's buttons. */
  const sendError = useSignal('');
  const live = useSignal(false);
  const error = useSignal('');
  const text = useSignal('');
  const busy = useSignal(false);
  /** The ledger messages whose app is shown inline. */
  const shown = useSignal<ReadonlySet<string>>(new Set());
  const toggleApp = (messageId: string) => {
    const next = new Set(shown.value);
    if (!next.delete(messageId)) next.add(messageId);
    shown.value = next;
  };

  /**
   * The timeline after an event or an answer here; what changes the thread's activity is told to the thread
   * list, which read it before (the reads here only fill in what the list already knew).
   */
  const advance = (next: Timeline) => {
    const before = activityOf(timeline.value);
    timeline.value = next;
    const after = activityOf(next);
    if (!sameActivity(before, after)) onActivity(id, after);
  };

  const loadConversation = async () => {
    const { data } = await api.GET('/api/console/threads/{id}/conversations', { params: { path: { id } } });
    const latest = data?.[data.length - 1] ?? null;
    conversation.value = latest;
    if (latest !== null) {
      const postures = await api.GET('/api/console/permissions');
      const agent = postures.data?.find((p) => p.agent === latest.agent);
      modes.value = agent?.modes ?? [];
      steering.value = agent?.steering ?? false;
    }
  };

  useEffect(() => {
    timeline.value = EMPTY_TIMELINE;
    worktree.value = false;
    lineage.value = null;
    shown.value = new Set();
    error.value = '';
    let connection: { close(): void } | null = null;
    let stopped = false;
    void (async () => {
      const thread = await api.GET('/api/console/threads/{id}', { params: { path: { id } } });
      if (thread.data === undefined) return void (error.value = problemText(thread.error, thread.response.status));
      title.value = thread.data.title;
      owner.value = thread.data.owner;
      worktree.value = thread.data.worktree !== null;
      meta.value = `${thread.data.channel}${thread.data.project === null ? '' : ` · ${thread.data.project}`}`;
      if (thread.data.fork_of !== null) void readLineage(thread.data.fork_of, thread.data.fork_cutoff);
      const [page, pending, queue] = await Promise.all([
        api.GET('/api/console/threads/{id}/messages', { params: { path: { id } } }),
        api.GET('/api/console/threads/{id}/pending', { params: { path: { id } } }),
        api.GET('/api/console/threads/{id}/queue', { params: { path: { id } } }),
        loadConversation(),
      ]);
      // The events replayed next (from the first) bring the queue from this read to now.
      const read = withQueue(timeline.value, (queue.data ?? []) as QueuedView[]);
      timeline.value = { ...read, messages: withMessages(read.messages, page.data?.items ?? []), pending: (pending.data ?? []) as PendingView[] };
      older.value = page.data?.next ?? null;
      if (stopped) return;
      connection = followThread(id, () => timeline.value.lastSeq, (event) => {
        advance(applyEvent(timeline.value, event));
        if (event.type === 'run_started' || event.type === 'reflex_asleep') void loadConversation();
        // A repository project's first turn makes the worktree: from then on the thread has Changes.
        if (event.type === 'run_started' && !worktree.value) void readWorktree();
        // A move writes its ledger line without a message event: the newest page brings it.
        if (event.type === 'gateway') void refreshLedger();
      }, (open) => (live.value = open));
    })();
    return () => {
      stopped = true;
      connection?.close();
    };
  }, [id]);

  const readLineage = async (source: string, cutoff: string | null) => {
    lineage.value = { thread_id: source, title: null, message_id: cutoff };
    // A source the caller can no longer read (a membership ended) is named by its id only.
    const { data } = await api.GET('/api/console/threads/{id}', { params: { path: { id: source } } });
    if (data !== undefined && lineage.value?.thread_id === source) lineage.value = { ...lineage.value, title: data.title };
  };
  /** Forks the thread at a message: a new thread of the caller's, opened at once. */
  const forkAt = async (messageId: string) => {
    if (forking.value) return;
    forking.value = true;
    error.value = '';
    const { data, error: problem, response } = await api.POST('/api/console/threads/{id}/fork', { params: { path: { id } }, body: { message_id: messageId } });
    forking.value = false;
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    onOpened(data.thread_id);
  };
  const readWorktree = async () => {
    const { data } = await api.GET('/api/console/threads/{id}', { params: { path: { id } } });
    if (data !== undefined) worktree.value = data.worktree !== null;
  };
  const refreshLedger = async () => {
    const { data } = await api.GET('/api/console/threads/{id}/messages', { params: { path: { id } } });
    if (data !== undefined) timeline.value = { ...timeline.value, messages: withMessages(timeline.value.messages, data.items) };
  };
  const loadOlder = async () => {
    if (older.value === null) return;
    const { data } = await api.GET('/api/console/threads/{id}/messages', { params: { path: { id }, query: { before: older.value } } });
    if (data === undefined) return;
    timeline.value = { ...timeline.value, messages: withMessages(timeline.value.messages, data.items) };
    older.value = data.next;
  };
  const answer = async (response: { id: string; option: string } | { id: string; answer: string }) => {
    const { error: problem, response: res } = await api.POST('/api/console/threads/{id}/responses', { params: { path: { id } }, body: { responses: [response] } });
    if (!res.ok) return void (error.value = problemText(problem, res.status));
    advance(withoutPending(timeline.value, [response.id]));
  };
  const setMode = async (mode: string) => {
    if (conversation.value === null) return;
    const { data, error: problem, response } = await api.PATCH('/api/console/conversations/{id}/permission-mode', { params: { path: { id: conversation.value.id } }, body: { permission_mode: mode } });
    if (data === undefined) return void (error.value = problemText(problem, response.status));
    conversation.value = data;
  };
  const cancel = async () => {
    const { error: problem, response } = await api.POST('/api/console/threads/{id}/cancel', { params: { path: { id } } });
    if (!response.ok) error.value = problemText(problem, response.status);
  };
  /**
   * Sends the composer's text: it runs now on an idle thread; on a busy one it is queued, or with `interrupt`
   * the running turn is cancelled and it runs next. Never refused for a turn just ending: it queues then.
   */
  const send = async (event: Event, whenBusy: 'queue' | 'interrupt' | 'steer' = 'queue') => {
    event.preventDefault();
    if (text.value.trim() === '' || busy.value) return;
    busy.value = true;
    sendError.value = '';
    steerNote.value = '';
    const body = { text: text.value, message_id: crypto.randomUUID(), when_busy: whenBusy };
    const { data, error: problem, response } = await api.POST('/api/console/threads/{thread}/directives', { params: { path: { thread: id } }, body });
    busy.value = false;
    if (!response.ok) return void (sendError.value = problemText(problem, response.status));
    text.value = '';
    // A steer the turn did not take (it ended, or asks something now) was queued, or runs now: said so.
    if (whenBusy === 'steer' && data !== undefined && data.steered === false) steerNote.value = 'The turn could not take it now: your message runs next instead.';
  };

  const running = runningRun(timeline.value);
  const moved = conversation.value?.moved_to ?? null;
  const owns = owner.value !== null && owner.value === me.value?.id;
  /** A rewind takes the run and every later one of the thread back (ids are UUIDv7: time order). */
  const rewound = (runId: string) => advance(withRewound(timeline.value, timeline.value.runs.filter((run) => run.id >= runId).map((run) => run.id)));
  const rewindOf = (run: RunView) => owns && !run.rewound && run.status !== 'running'
    ? <RewindRun threadId={id} runId={run.id} ready={running === null && timeline.value.queue.length === 0} onRewound={rewound} />
    : null;
  return (
    <section class="thread" aria-labelledby="thread-title" data-live={live.value ? 'open' : 'closed'}>
      <header>
        <div><h2 id="thread-title">{title.value}</h2><p class="meta">{meta.value}{conversation.value !== null && ` · ${conversation.value.agent}${conversation.value.model === null ? '' : `:${conversation.value.model}`}`}</p></div>
        <div class="controls">
          {conversation.value !== null && modes.value.length > 0 && (
            <label for="posture">Posture
              <select id="posture" value={conversation.value.permission_mode ?? ''} onChange={(e) => void setMode((e.target as HTMLSelectElement).value)}>
                {modes.value.map((mode) => <option key={mode} value={mode}>{mode}</option>)}
              </select>
            </label>
          )}
          {running !== null && <button type="button" class="cancel" onClick={() => void cancel()}>Cancel run</button>}
        </div>
      </header>
      {error.value !== '' && <p role="alert" class="error">{error.value}</p>}
      {lineage.value !== null && (
        <p class="lineage" role="note">
          Forked from <a href={`#/threads/${lineage.value.thread_id}`}>{lineage.value.title ?? 'a thread you cannot open now'}</a>
          {lineage.value.message_id !== null && ' at a message'}: it sees that thread's messages up to there.
        </p>
      )}
      {moved !== null && (
        <p class="moved" role="status">
          This conversation moved to {moved.address.channel} ({moved.address.id}); it continues there.{' '}
          <a href={`#/threads/${moved.thread_id}`}>Open the thread it moved to</a>
        </p>
      )}
      {older.value !== null && <button type="button" onClick={() => void loadOlder()}>Older messages</button>}
      <ol class="ledger" aria-label="Messages">
        {threadEntries(timeline.value, older.value === null, owns).map((entry) => {
          if (entry.kind === 'run') return <li key={entry.run.id} class="run-entry"><RunCard run={entry.run} rewind={rewindOf(entry.run)} /></li>;
          const { message } = entry;
          return (
            <li key={message.id} data-role={message.role} data-message-id={message.id}>
              <span class="role">{message.role}</span>
              <OriginLabel origin={message.origin} crons={crons.value} />
              <button type="button" class="fork" disabled={forking.value} onClick={() => void forkAt(message.id)} title="A new thread of yours that sees the messages up to this one">Fork from here</button>
              {message.role === 'assistant' ? <AgentText text={message.text} /> : <p>{message.text}</p>}
              {message.app !== undefined && (
                <p class="app-ref">
                  <button type="button" aria-expanded={shown.value.has(message.id)} onClick={() => toggleApp(message.id)}>
                    {shown.value.has(message.id) ? 'Hide' : 'Show'} app: {message.app.title}
                  </button>
                  {' '}<span class="hint">{message.app.provider_name}</span>
                  {' '}<a href={message.app.viewer_url} target="_blank" rel="noopener">Open in the viewer</a>
                </p>
              )}
              {message.app !== undefined && shown.value.has(message.id) && (
                <InlineApp threadId={id} messageId={message.id} title={message.app.title} onClose={() => toggleApp(message.id)} />
              )}
            </li>
          );
        })}
      </ol>
      {timeline.value.notes.map((note, i) => <p key={i} class="note">{note}</p>)}
      {timeline.value.pending.map((item) => <PendingCard key={item.id} item={item} answer={(r) => void answer(r)} />)}
      <QueueList threadId={id} items={timeline.value.queue} viewer={me.value?.id ?? null} owner={owner.value} crons={crons.value} onProblem={(text) => (error.value = text)} />
      {/* A run's end or a rewind changes the files: the changes are read again. */}
      {worktree.value && <ChangesView key={id} threadId={id} version={timeline.value.runs.filter((run) => run.status !== 'running').length + timeline.value.runs.filter((run) => run.rewound).length} onProblem={(text) => (error.value = text)} />}
      {/* Always there (what it offers says why it cannot move now), so a replay's passing runs never reset it. */}
      <Moves key={id} threadId={id} version={timeline.value.runs.length + timeline.value.runs.filter((run) => run.status !== 'running').length} onMoved={onOpened} />
      <form class="composer" onSubmit={send}>
        <label for="continue-text">Message</label>
        <textarea id="continue-text" rows={3} value={text.value} onInput={(e) => (text.value = (e.target as HTMLTextAreaElement).value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) void send(e); }} />
        <div class="actions">
          <button type="submit" disabled={busy.value || moved !== null}>Send</button>
          {running !== null && moved === null && steering.value && timeline.value.pending.length === 0 && (
            <button type="button" class="steer" disabled={busy.value} onClick={(e) => void send(e, 'steer')}
              title="Sends your message into the turn that runs now, without stopping it">Steer</button>
          )}
          {running !== null && moved === null && (
            <>
              <button type="button" class="interrupt" disabled={busy.value} onClick={(e) => void send(e, 'interrupt')}>Interrupt and send</button>
              <span class="hint">
                The agent is working: Send queues your message to run after this turn
                {steering.value && timeline.value.pending.length === 0 ? '; Steer sends it into this turn.' : '.'}
              </span>
            </>
          )}
          {steerNote.value !== '' && <span class="hint" role="status">{steerNote.value}</span>}
          {sendError.value !== '' && <span class="error" role="alert">{sendError.value}</span>}
        </div>
      </form>
    </section>
  );
}
