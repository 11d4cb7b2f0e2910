/*
 * What a thread shows, built from its ledger pages and its live events: the ledger's messages (deduped by
 * id, oldest first), each run as it happens (streamed text, thoughts, tool calls merged by id, the plan,
 * its end, whether a rewind took it back), the items pending an answer and the directives queued to run next. Pure and immutable (each event gives a new timeline), so the
 * same events in the same order always give the same view, a replayed event changes nothing, and it is
 * tested in Node.
 */

/** Where a directive came from when no person typed it: a schedule's fire or a hook's call (contract section 12). */
export interface DirectiveOriginShape {
  readonly kind: 'schedule' | 'hook';
  readonly id: string;
}

/** A ledger row as the console answers it (GET /threads/{id}/messages, or a live `message` event). */
export interface LedgerMessageShape {
  readonly id: string;
  readonly role: string;
  readonly text: string;
  readonly artifact_id: string | null;
  readonly created_at: string;
  /** The schedule or hook that sent this directive; null (or absent, from an older service) for anything else. */
  readonly origin?: DirectiveOriginShape | null;
  readonly app?: { readonly artifact_id: string; readonly title: string; readonly provider_name: string; readonly viewer_url: string };
}

export interface ToolCallView {
  readonly id: string;
  readonly title?: string;
  readonly kind?: string;
  readonly status?: string;
  readonly content?: readonly Record<string, unknown>[];
  readonly [field: string]: unknown;
}

export interface PendingView {
  readonly id: string;
  readonly kind: 'approval' | 'question';
  readonly run_id: string | null;
  readonly title: string;
  readonly options: readonly { readonly id: string; readonly name: string; readonly kind: string | null }[];
  readonly tool_call: ToolCallView | null;
}

/** A directive waiting in the thread's queue, as `GET /threads/{id}/queue` and the `queued` event give it. */
export interface QueuedView {
  readonly id: string;
  readonly message_id: string;
  readonly text: string;
  readonly author: string;
  /** From 1, the next to run, when it was read or announced. */
  readonly position: number;
  readonly created_at: string;
  /** The schedule or hook that queued it; null (or absent) for a person's. */
  readonly origin?: DirectiveOriginShape | null;
}

export type RunStatus = 'running' | 'succeeded' | 'failed' | 'cancelled';

export interface RunView {
  readonly id: string;
  readonly status: RunStatus;
  readonly text: string;
  readonly thoughts: string;
  readonly toolCalls: readonly ToolCallView[];
  readonly plan: readonly { readonly content: string; readonly priority: string; readonly status: string }[];
  readonly error: string | null;
  /** Taken back by a rewind: still shown, and no later turn sees it (its end's `run` says so, or a `rewound` event names it). */
  readonly rewound: boolean;
}

export interface Timeline {
  /** The last event applied; a socket reconnects with `after` = this, and older events are ignored. */
  readonly lastSeq: number;
  readonly messages: readonly LedgerMessageShape[];
  readonly runs: readonly RunView[];
  readonly pending: readonly PendingView[];
  /** A system line per move of the conversation (teleport, summon). */
  readonly notes: readonly string[];
  /**
   * Run id to the id of the ledger message that started it: the one its `message` event carried before the
   * run's `run_started` (a directive or a summon's brief is stored with its run, in one transaction).
   */
  readonly startedBy: Readonly<Record<string, string>>;
  /** The directives queued, the next to run first; their ledger messages are drawn here, not in the ledger, until they start. */
  readonly queue: readonly QueuedView[];
  /**
   * Ledger message id to the id of the run its queued directive started (`dequeued`): the message was
   * written when it was queued, and reads at the time its turn came.
   */
  readonly dequeuedInto: Readonly<Record<string, string>>;
}

export const EMPTY_TIMELINE: Timeline = { lastSeq: 0, messages: [], runs: [], pending: [], notes: [], startedBy: {}, queue: [], dequeuedInto: {} };

/** A live event as the socket sends it. */
export interface LiveEventShape {
  readonly seq: number;
  readonly type: string;
  readonly thread_id: string;
  readonly at: string;
  readonly data: Readonly<Record<string, unknown>>;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Messages with `more` added, each id once (a later copy replaces an earlier one), ordered by id (UUIDv7: time). */
export function withMessages(messages: readonly LedgerMessageShape[], more: readonly LedgerMessageShape[]): readonly LedgerMessageShape[] {
  const byId = new Map(messages.map((message) => [message.id, message]));
  for (const message of more) byId.set(message.id, message);
  return [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const newRun = (id: string): RunView => ({ id, status: 'running', text: '', thoughts: '', toolCalls: [], plan: [], error: null, rewound: false });

function updateRun(timeline: Timeline, runId: unknown, change: (run: RunView) => RunView): Timeline {
  if (typeof runId !== 'string') return timeline;
  const index = timeline.runs.findIndex((run) => run.id === runId);
  const runs = [...timeline.runs];
  if (index === -1) runs.push(change(newRun(runId)));
  else runs[index] = change(runs[index]!);
  return { ...timeline, runs };
}

/** A tool call merged by id: fields given replace the old ones (a list given replaces the old list). */
function mergeToolCall(calls: readonly ToolCallView[], data: Readonly<Record<string, unknown>>): readonly ToolCallView[] {
  const { run_id: _run, update: _update, ...fields } = data;
  if (typeof fields.id !== 'string') return calls;
  const index = calls.findIndex((call) => call.id === fields.id);
  if (index === -1) return [...calls, fields as ToolCallView];
  const merged = [...calls];
  merged[index] = { ...merged[index]!, ...fields } as ToolCallView;
  return merged;
}

const isQueued = (value: unknown): value is QueuedView =>
  isRecord(value) && typeof value.id === 'string' && typeof value.message_id === 'string' && typeof value.text === 'string' && typeof value.author === 'string';

/**
 * The queue with an item announced: an item already there is replaced where it stands (an edit); a new
 * one goes in at its position (an interrupt's is 1).
 */
function withQueued(queue: readonly QueuedView[], item: QueuedView): readonly QueuedView[] {
  const index = queue.findIndex((queued) => queued.id === item.id);
  if (index !== -1) return queue.map((queued, i) => (i === index ? item : queued));
  const at = Number.isInteger(item.position) ? Math.min(Math.max(item.position - 1, 0), queue.length) : queue.length;
  return [...queue.slice(0, at), item, ...queue.slice(at)];
}

const ENDS: Record<string, RunStatus> = { run_finished: 'succeeded', run_error: 'failed', run_cancelled: 'cancelled' };

/** The timeline after one live event; an event at or before `lastSeq` changes nothing. */
export function applyEvent(timeline: Timeline, event: LiveEventShape): Timeline {
  if (!Number.isInteger(event.seq) || event.seq <= timeline.lastSeq) return timeline;
  const next: Timeline = { ...timeline, lastSeq: event.seq };
  const data = event.data;
  switch (event.type) {
    case 'message': {
      if (isRecord(data.message) && typeof data.message.id === 'string') {
        const messages = withMessages(next.messages, [data.message as unknown as LedgerMessageShape]);
        // Only a message before its run started is the one that started it; the agent's reply comes later.
        const runId = data.run_id;
        const starts = typeof runId === 'string' && !Object.hasOwn(next.startedBy, runId) && !next.runs.some((run) => run.id === runId);
        return { ...next, messages, ...(starts ? { startedBy: { ...next.startedBy, [runId]: data.message.id } } : {}) };
      }
      if (typeof data.delta === 'string') return updateRun(next, data.run_id, (run) => ({ ...run, text: run.text + data.delta }));
      if (isRecord(data.update) && data.update.kind === 'thought' && typeof data.update.text === 'string') {
        const thought = data.update.text;
        return updateRun(next, data.run_id, (run) => ({ ...run, thoughts: run.thoughts + thought }));
      }
      return next;
    }
    case 'run_started':
      return updateRun(next, data.run_id, (run) => run);
    case 'tool_call':
      return updateRun(next, data.run_id, (run) => ({ ...run, toolCalls: mergeToolCall(run.toolCalls, data) }));
    case 'plan':
      return Array.isArray(data.entries) ? updateRun(next, data.run_id, (run) => ({ ...run, plan: data.entries as RunView['plan'] })) : next;
    case 'approval_requested': {
      if (!isRecord(data.pending) || typeof data.pending.id !== 'string') return next;
      const item = data.pending as unknown as PendingView;
      return { ...next, pending: [...next.pending.filter((p) => p.id !== item.id), item] };
    }
    case 'run_finished':
    case 'run_error':
    case 'run_cancelled': {
      const status = ENDS[event.type]!;
      const error = typeof data.error === 'string' ? data.error : typeof data.reason === 'string' ? data.reason : null;
      const rewound = isRecord(data.run) && data.run.rewound === true;
      const ended = updateRun(next, data.run_id, (run) => ({ ...run, status, error, rewound: run.rewound || rewound }));
      return { ...ended, pending: ended.pending.filter((p) => p.run_id !== data.run_id) };
    }
    case 'steered':
      // A message sent into the running turn: a ledger message that starts no run of its own.
      return isRecord(data.message) && typeof data.message.id === 'string' ? { ...next, messages: withMessages(next.messages, [data.message as unknown as LedgerMessageShape]) } : next;
    case 'queued':
      return isQueued(data) ? { ...next, queue: withQueued(next.queue, data) } : next;
    case 'dequeued': {
      const queue = next.queue.filter((item) => item.id !== data.id);
      const runId = data.run_id;
      // A withdrawn item starts nothing; a started one brings its ledger message, and its run follows it.
      if (typeof runId !== 'string' || !isRecord(data.message) || typeof data.message.id !== 'string') return { ...next, queue };
      const message = data.message as unknown as LedgerMessageShape;
      const starts = !Object.hasOwn(next.startedBy, runId) && !next.runs.some((run) => run.id === runId);
      return {
        ...next,
        queue,
        messages: withMessages(next.messages, [message]),
        dequeuedInto: { ...next.dequeuedInto, [message.id]: runId },
        ...(starts ? { startedBy: { ...next.startedBy, [runId]: message.id } } : {}),
      };
    }
    case 'rewound':
      return Array.isArray(data.runs) ? withRewound(next, data.runs.filter((run): run is string => typeof run === 'string')) : next;
    case 'gateway': {
      const operation = typeof data.operation === 'string' ? data.operation : 'move';
      const hint = typeof data.hint === 'string' && data.hint !== '' ? `: ${data.hint}` : '';
      return { ...next, notes: [...next.notes, `${operation}${hint}`] };
    }
    default:
      return next;
  }
}

/** Items answered here leave at once, before the agent's next event says so. */
export const withoutPending = (timeline: Timeline, ids: readonly string[]): Timeline => ({
  ...timeline,
  pending: timeline.pending.filter((item) => !ids.includes(item.id)),
});

/**
 * The runs named read rewound; a run not on the page yet is not made up for it (a rewind names only runs whose
 * events came before its own).
 */
export const withRewound = (timeline: Timeline, runIds: readonly string[]): Timeline => ({
  ...timeline,
  runs: timeline.runs.map((run) => (runIds.includes(run.id) && !run.rewound ? { ...run, rewound: true } : run)),
});

/** The queue as `GET /threads/{id}/queue` answered it: the events after the read say what changed since. */
export const withQueue = (timeline: Timeline, queue: readonly QueuedView[]): Timeline => ({ ...timeline, queue });

/** The run still running, if any (the latest one). */
export const runningRun = (timeline: Timeline): RunView | null => [...timeline.runs].reverse().find((run) => run.status === 'running') ?? null;
