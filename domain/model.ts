/**
 * The domain as it is stored. These are the rows the console reads answer, field for field
 * (contract section 4); relations a read does not answer are not part of them.
 */

/** A UUIDv7 string: every thread, message, conversation, run, artifact and installation id. */
export type Id = string;

/** The console's own channel: where directives create and continue threads, and a teleport may open a new one. */
export const CONSOLE_CHANNEL = 'console';

/** A person who uses the console. */
export interface User {
  readonly id: string;
  readonly name: string;
}

/** A thread row. `project` is frozen when the row is written; `messages` are a separate read. */
export interface Thread {
  readonly id: Id;
  /** The client-chosen key of a console thread (scoped to its owner), or null. */
  readonly key: string | null;
  readonly channel: string;
  readonly owner: string;
  readonly project: string | null;
  readonly title: string;
  readonly fork_of: Id | null;
  /** The id of the last parent message the fork sees. */
  readonly fork_cutoff: Id | null;
  readonly created_at: string;
  /** The git worktree the thread's runs work in (a thread on a repository project, from its first turn on); else null. */
  readonly worktree: Worktree | null;
  /** Whether its owner archived it: the thread list leaves it out unless asked for archived threads (contract section 4). */
  readonly archived: boolean;
}

/** A thread's own git worktree: its branch (`console/<thread id>`), the branch it was made from, and where it is on disk. */
export interface Worktree {
  readonly branch: string;
  readonly base: string;
  readonly path: string;
}

/** What is going on in a thread, for a list of threads: a turn running, items waiting on a person, directives queued. */
export interface ThreadActivity {
  readonly turn_running: boolean;
  readonly approvals: number;
  readonly questions: number;
  /** Directives waiting in the thread's queue (contract section 7). */
  readonly queued: number;
}

/** A thread as the thread list answers it: the row and its activity. */
export type ThreadListItem = Thread & { readonly activity: ThreadActivity };

/**
 * Where a directive came from when no person typed it (contract section 12): a schedule's fire or a hook's
 * call, named by the schedule's or hook's id. Set by the server only, never read from a request body.
 */
export interface DirectiveOrigin {
  readonly kind: 'schedule' | 'hook';
  readonly id: Id;
}

/** One entry of a thread's chat ledger. */
export interface Message {
  readonly id: Id;
  readonly role: string;
  readonly text: string;
  readonly artifact_id: Id | null;
  readonly created_at: string;
  /** The schedule or hook that sent this directive; null for a person's directive and for every other message. */
  readonly origin: DirectiveOrigin | null;
}

/** Where a conversation lives on its thread's channel. */
export interface Address {
  readonly channel: string;
  readonly id: string;
}

/** One agent's conversation in a thread, remembering its approval posture. */
export interface Conversation {
  readonly id: Id;
  readonly thread_id: Id;
  readonly agent: string;
  readonly model: string | null;
  readonly permission_mode: string | null;
  readonly effort: string | null;
  readonly address: Address | null;
  /** Whether a turn is running now. */
  readonly turn_running: boolean;
  readonly created_at: string;
  /** Where the conversation went when a teleport moved it away from this thread; null while it is here. */
  readonly moved_to: MovedTo | null;
}

/** Where a moved conversation lives now: the thread it landed in, its conversation row there, and its address. */
export interface MovedTo {
  readonly thread_id: Id;
  readonly conversation_id: Id;
  readonly address: Address;
}

/** The states a run can be in. */
export const RUN_STATUSES = ['running', 'succeeded', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** One agent run under a conversation; `directory` is where it worked, learned from the session. */
export interface Run {
  readonly id: Id;
  readonly conversation_id: Id;
  readonly directory: string | null;
  readonly status: RunStatus;
  readonly error: string | null;
  readonly started_at: string;
  readonly ended_at: string | null;
  /** Whether a rewind took the run back (contract section 11): it stays readable, and later turns do not see it. */
  readonly rewound: boolean;
}

/** One message of the model conversation inside a run. */
export interface ModelMessage {
  readonly id: Id;
  readonly run_id: Id;
  readonly role: string;
  readonly content: string;
  readonly created_at: string;
}

/** The kinds of permission options ACP defines: a client may render or pre-select by kind. */
export const PERMISSION_OPTION_KINDS = ['allow_once', 'allow_always', 'reject_once', 'reject_always'] as const;
export type PermissionOptionKind = (typeof PERMISSION_OPTION_KINDS)[number];

/** A choice offered with a pending approval or question: an approval keeps the agent's ACP option id, name and kind. */
export interface PendingOption {
  readonly id: string;
  readonly name: string;
  /** The ACP option kind; null for a question's choices and for items that never had one. */
  readonly kind: PermissionOptionKind | null;
}

/** What a tool call's `content` holds (ACP `ToolCallContent`). */
export type ToolCallContent =
  | { readonly type: 'diff'; readonly path: string; readonly oldText?: string | null; readonly newText: string }
  | { readonly type: 'content'; readonly content: Readonly<Record<string, unknown>> }
  | { readonly type: 'terminal'; readonly terminalId: string };

/**
 * An agent's tool call, as ACP describes it (`tool_call`, `tool_call_update`, or the tool call of a
 * permission ask), with `toolCallId` named `id`: a fresh call carries what the agent sent, an update
 * only what changed (a field left out is unchanged). ACP's `_meta` is not kept.
 */
export interface ToolCall {
  readonly id: string;
  readonly title?: string;
  /** `read`, `edit`, `delete`, `move`, `search`, `execute`, `think`, `fetch`, `switch_mode`, `other`. */
  readonly kind?: string;
  /** `pending`, `in_progress`, `completed`, `failed`. */
  readonly status?: string;
  /** The tool's programmatic name, when the agent gives one. */
  readonly name?: string;
  readonly content?: readonly ToolCallContent[];
  readonly locations?: readonly { readonly path: string; readonly line?: number | null }[];
  readonly rawInput?: unknown;
  readonly rawOutput?: unknown;
}

/** An approval or a question waiting for the user's answer. */
export interface Pending {
  readonly id: Id;
  readonly kind: 'approval' | 'question';
  readonly conversation_id: Id;
  readonly run_id: Id | null;
  readonly title: string;
  readonly options: readonly PendingOption[];
  /** The tool call an approval asks about (what ACP's permission ask carries: its diff, command, locations); else null. */
  readonly tool_call: ToolCall | null;
}

/**
 * A project a thread may work in: `directory` is its directory on disk, or null for
 * `DATA_DIR/projects/<name>`; a repository project names a git repository (`repo`, absolute) and
 * the branch (`base`) each thread's worktree starts from (both null for a plain directory).
 */
export interface Project {
  readonly name: string;
  readonly directory: string | null;
  readonly repo: string | null;
  readonly base: string | null;
}

/** A provider MCP server installed by a user. `headers` are its credentials: never answered. */
export interface Installation {
  readonly id: Id;
  readonly owner: string;
  readonly provider_name: string;
  readonly server_url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly enabled: boolean;
  readonly authorized: boolean;
}

/** A saved MCP app invocation: the tool call and its result, and the UI resource it names. */
export interface Artifact {
  readonly id: Id;
  readonly owner: string;
  readonly installation: Id;
  readonly resource_uri: string;
  readonly title: string;
  readonly tool: string;
  readonly input: unknown;
  readonly output: unknown;
  readonly created_at: string;
}

/**
 * An agent the service can run, as the world file names it. Its vocabularies are what the agent
 * itself advertises (see `offeredAgent`); a list given here narrows that, null narrows nothing.
 */
export interface Agent {
  readonly id: string;
  readonly models: readonly string[] | null;
  readonly efforts: readonly string[] | null;
  readonly permission_modes: readonly string[] | null;
  /** Null: the mode a new session of the agent starts in. */
  readonly default_permission_mode: string | null;
  /** The Agent Client Protocol process; null for the bundled demo agent. */
  readonly command: readonly string[] | null;
  /** Literal variables set in the agent's environment (absent: none). */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Names of variables passed through from the service's own environment when the agent starts
   * (absent: none); their values are read then, never stored.
   */
  readonly env_pass?: readonly string[];
  /**
   * The network a sandboxed agent reaches (absent: `host`): `host`, the machine's, as the service's;
   * `none`, a loopback of its own and nothing else. Without a sandbox an agent always has the host's.
   */
  readonly network?: AgentNetwork;
}

/** A sandboxed agent's network: the host's, or none (a loopback of its own). */
export type AgentNetwork = 'host' | 'none';

/** A destination on a channel, one level of a tree. */
export interface ChannelPlace {
  readonly id: string;
  readonly name: string;
  readonly shared: boolean;
  readonly inside: string | null;
  readonly barred: string | null;
  readonly children: readonly ChannelPlace[];
}

/** A connected channel: the console itself, a team chat, and so on. */
export interface Channel {
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  readonly shared: boolean;
  readonly browsable: boolean;
  readonly agents: readonly string[];
  readonly linked_users: readonly string[];
  readonly addresses: readonly ChannelPlace[];
  /** What a thread a chat message starts on this channel gets (the world file's `defaults`); null: none. */
  readonly defaults: ChannelDefaults | null;
}

/**
 * A channel's defaults for the threads its chat messages start (docs/channels.md): each null when the
 * world gives none (then: no project, the channel's first agent and its first model, its default posture, no effort).
 */
export interface ChannelDefaults {
  readonly project: string | null;
  /** `agent` or `agent:model`: the agent must be one of the channel's. */
  readonly route: string | null;
  readonly permission_mode: string | null;
  readonly effort: string | null;
}

/** A keyset page, newest first; `next` is the cursor of the following page, or null at the end. */
export interface Page<T> {
  readonly items: readonly T[];
  readonly next: Id | null;
}

/** What a page read asks for: up to `limit` items older than `before`. */
export interface PageRequest {
  readonly limit: number;
  readonly before: Id | null;
}
