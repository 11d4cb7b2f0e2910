import type { DirectiveOrigin, Agent, Channel, Project, Conversation, Installation, Message, ModelMessage, Pending, Run, Thread, ThreadActivity } from '../../domain/model.ts';
import type { PendingRestore } from '../../ports/rewind-writes.ts';
import type { Artifact } from '../../domain/model.ts';
import type { WireEvent } from '../../domain/events.ts';
import type { DirectiveAnswer } from '../../ports/directive-writes.ts';
import type { PendingAnswer } from '../../ports/event-bus.ts';
import type { QueuedDirective } from '../../ports/queue-edits.ts';
import type { OutboxEntry } from './delivery-outbox.ts';
import type { MemoryLinks } from './channel-links.ts';
import type { MemoryHooks } from './hook-store.ts';
import type { MemorySchedules } from './schedule-store.ts';
import type { MemoryWebhooks } from './webhook-store.ts';
import type { MemoryChatInbox } from './chat-inbox.ts';
import type { MemoryAccount, MemoryCredentials } from './accounts.ts';

/** A queued directive as the memory state keeps it: the row, and what its turn needs later. */
export interface MemoryQueued {
  readonly id: string;
  readonly thread_id: string;
  readonly conversation_id: string;
  readonly message_id: string;
  text: string;
  readonly author: string;
  /** The order it runs in: an interrupt takes one below the smallest. */
  readonly ordinal: number;
  readonly directory: string | null;
  readonly permission_mode: string | null;
  readonly created_at: string;
  readonly origin: DirectiveOrigin | null;
}

/** A dequeued directive's turn whose prompt has not reached its agent: what starting it again needs. */
export interface MemoryUnsent {
  readonly thread_id: string;
  readonly item: QueuedDirective;
  readonly message: Message;
  readonly event: WireEvent;
}

/** Everything the memory adapter holds, keyed by id; rows are stored exactly as the reads answer them. */
export interface MemoryState {
  /** Accounts by id, with the world token's hash (null for an OpenID Connect user) and the OIDC subject. */
  readonly users: Map<string, MemoryAccount>;
  /** Sessions, personal tokens, sign-ins under way and invites. */
  readonly credentials: MemoryCredentials;
  /** Each project by name: its directory on disk (null: the default under `DATA_DIR`), or its repository and base branch. */
  readonly projects: Map<string, Project>;
  readonly agents: Map<string, Agent>;
  readonly channels: Map<string, Channel>;
  readonly threads: Map<string, Thread>;
  readonly members: Map<string, Set<string>>;
  /** Ledger messages with the thread they belong to. */
  readonly messages: Map<string, Message & { readonly thread_id: string }>;
  readonly conversations: Map<string, Conversation>;
  readonly runs: Map<string, Run>;
  readonly modelMessages: Map<string, ModelMessage>;
  readonly pending: Map<string, Pending>;
  readonly installations: Map<string, Installation>;
  readonly artifacts: Map<string, Artifact>;
  /** Directive answers and who sent them, by thread id, then by the client's `message_id`. */
  readonly directives: Map<string, Map<string, { readonly author: string; readonly answer: DirectiveAnswer }>>;
  /** The agent session of a conversation, by conversation id (not part of the conversation row). */
  readonly sessions: Map<string, string>;
  /** Each thread's live events, in `seq` order (index = seq - 1). */
  readonly events: Map<string, WireEvent[]>;
  /** The events appended under a key (EventLog.append's `key`), by `thread id\u0000key`. */
  readonly eventKeys: Map<string, WireEvent>;
  /** The lease of each running turn, by conversation id (not part of the conversation row). */
  readonly turns: Map<string, { run_id: string | null; holder: string | null; expires: number }>;
  /** Answers to pending items whose run still waits, by pending id, with that run. */
  readonly pendingAnswers: Map<string, { run_id: string; answer: PendingAnswer }>;
  /** Deliveries to channels not yet taken, by id (removed once taken). */
  readonly deliveries: Map<string, OutboxEntry>;
  /** Directives queued on busy threads, by id (removed when their turn starts, or when revoked). */
  readonly queue: Map<string, MemoryQueued>;
  /** Users' links to chat addresses, and the codes that make them. */
  readonly channelLinks: MemoryLinks;
  /** Hooks in (contract section 12), and the idempotency keys of their calls. */
  readonly hooks: MemoryHooks;
  /** Schedules (contract section 12), and the due times claimed and not yet sent. */
  readonly schedules: MemorySchedules;
  /** Webhooks out (contract section 12), and their outbox. */
  readonly webhooks: MemoryWebhooks;
  /** What chat adapters have read (cursors) and handled (claims). */
  readonly chatInbox: MemoryChatInbox;
  /** Dequeued directives whose prompt has not reached their agent yet, by run id (removed when taken, or when the turn ends). */
  readonly unsent: Map<string, MemoryUnsent>;
  /** The ledger message that started each run, by run id (what `runs.message_id` keeps). */
  readonly runMessages: Map<string, string>;
  /** The ledger messages a rewind took back (what `messages.rewound` marks). */
  readonly rewoundMessages: Set<string>;
  /** Rewinds whose files are not yet restored, by thread id (`thread_rewinds`). */
  readonly rewinds: Map<string, PendingRestore>;
}

/** An empty state. */
export function emptyState(): MemoryState {
  return {
    users: new Map(),
    credentials: { sessions: new Map(), tokens: new Map(), flows: new Map(), invites: new Map() },
    projects: new Map(),
    agents: new Map(),
    channels: new Map(),
    threads: new Map(),
    members: new Map(),
    messages: new Map(),
    conversations: new Map(),
    runs: new Map(),
    modelMessages: new Map(),
    pending: new Map(),
    installations: new Map(),
    artifacts: new Map(),
    directives: new Map(),
    sessions: new Map(),
    events: new Map(),
    eventKeys: new Map(),
    turns: new Map(),
    pendingAnswers: new Map(),
    deliveries: new Map(),
    queue: new Map(),
    channelLinks: { codes: new Map(), links: new Map() },
    hooks: { hooks: new Map(), keys: new Map() },
    schedules: { schedules: new Map(), fires: new Map() },
    webhooks: { webhooks: new Map(), deliveries: new Map() },
    chatInbox: { cursors: new Map(), claims: new Map(), occupants: new Map(), served: new Map() },
    unsent: new Map(),
    runMessages: new Map(),
    rewoundMessages: new Set(),
    rewinds: new Map(),
  };
}

/** What is going on in a thread: a turn running on any of its conversations, the approvals and questions pending, the directives queued. */
export function threadActivity(state: MemoryState, threadId: string): ThreadActivity {
  const conversations = [...state.conversations.values()].filter((c) => c.thread_id === threadId);
  const pending = [...state.pending.values()].filter((p) => conversations.some((c) => c.id === p.conversation_id));
  return {
    turn_running: conversations.some((c) => c.turn_running),
    approvals: pending.filter((p) => p.kind === 'approval').length,
    questions: pending.filter((p) => p.kind === 'question').length,
    queued: [...state.queue.values()].filter((q) => q.thread_id === threadId).length,
  };
}
