import type { Role } from './accounts.ts';
import type {
  Address,
  Agent,
  Artifact,
  Channel,
  Installation,
  ModelMessage,
  PendingOption,
  Project,
  RunStatus,
  ToolCall,
} from './model.ts';
import type { SlackSettings } from './slack.ts';
import type { XmppAccount } from './xmpp.ts';

/**
 * The whole state as the world file describes it (contract section 6), after validation: ids are
 * lower-case UUIDv7, references resolve, and user tokens are already SHA-256 hashes.
 */
export interface World {
  readonly users: readonly WorldUser[];
  readonly projects: readonly Project[];
  readonly agents: readonly Agent[];
  readonly channels: readonly Channel[];
  readonly installations: readonly Installation[];
  readonly artifacts: readonly Omit<Artifact, 'created_at'>[];
  readonly threads: readonly WorldThread[];
  /** The xmpp channels' servers, bot accounts and links (contract section 9); absent: none. */
  readonly xmpp?: readonly WorldXmppChannel[];
  /** The slack channels' token variables, Web API URL and links (contract section 10); absent: none. */
  readonly slack?: readonly WorldSlackChannel[];
}

/** A slack channel's setting, apart from its catalog entry (never returned by a read). */
export interface WorldSlackChannel {
  /** The channel's id. */
  readonly channel: string;
  readonly settings: SlackSettings;
  /** Console user id to the Slack user id it is linked to. */
  readonly links: Readonly<Record<string, string>>;
}

/** An xmpp channel's setting, apart from its catalog entry (never returned by a read). */
export interface WorldXmppChannel {
  /** The channel's id. */
  readonly channel: string;
  readonly account: XmppAccount;
  /** Console user id to the bare JID it is linked to. */
  readonly links: Readonly<Record<string, string>>;
}

export interface WorldUser {
  readonly id: string;
  readonly name: string;
  /** SHA-256 of the user's token, hex. */
  readonly token_hash: string;
  /** `admin` or `member` (the world file's `role`); absent: `member`. */
  readonly role?: Role;
}

export interface WorldThread {
  readonly id: string;
  readonly key: string | null;
  readonly channel: string;
  readonly owner: string;
  readonly members: readonly string[];
  readonly project: string | null;
  readonly title: string;
  readonly fork_of: string | null;
  readonly fork_cutoff: string | null;
  readonly messages: readonly WorldMessage[];
  readonly conversations: readonly WorldConversation[];
}

export interface WorldMessage {
  readonly id: string;
  readonly role: string;
  readonly text: string;
  readonly artifact_id: string | null;
}

export interface WorldConversation {
  readonly id: string;
  readonly agent: string;
  readonly model: string | null;
  readonly permission_mode: string | null;
  readonly effort: string | null;
  readonly address: Address | null;
  readonly turn_running: boolean;
  readonly pending: readonly WorldPending[];
  readonly runs: readonly WorldRun[];
}

export interface WorldPending {
  readonly id: string;
  readonly kind: 'approval' | 'question';
  readonly run_id: string | null;
  readonly title: string;
  readonly options: readonly PendingOption[];
  readonly tool_call: ToolCall | null;
}

export interface WorldRun {
  readonly id: string;
  readonly directory: string | null;
  readonly status: RunStatus;
  readonly error: string | null;
  readonly ended_at: string | null;
  readonly model_messages: readonly Omit<ModelMessage, 'run_id' | 'created_at'>[];
}
