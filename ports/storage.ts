import type { World } from '../domain/world.ts';
import type { Accounts } from './accounts.ts';
import type { ArtifactStore } from './artifact-store.ts';
import type { Catalog } from './catalog.ts';
import type { ChannelLinks } from './channel-links.ts';
import type { ChatInbox } from './chat-inbox.ts';
import type { HookStore } from './hook-store.ts';
import type { ScheduleStore } from './schedule-store.ts';
import type { WebhookStore } from './webhook-store.ts';
import type { StorageWriter } from './storage-writer.ts';
import type { ConversationStore } from './conversation-store.ts';
import type { DeliveryOutbox } from './delivery-outbox.ts';
import type { EventLog } from './event-log.ts';
import type { LedgerStore } from './ledger-store.ts';
import type { ReadinessProbe } from './readiness.ts';
import type { ThreadStore } from './thread-store.ts';

/** One storage backend: every store over the same state, and its life cycle. */
export interface Storage {
  /** Accounts and the credentials that name them: world tokens, sessions, personal tokens (sign-in, bearer and cookie). */
  readonly accounts: Accounts;
  /** Thread rows and their access, the fork chain for the ledger, and the thread list. */
  readonly threads: ThreadStore;
  /** The chat ledger, one keyset page at a time. */
  readonly ledger: LedgerStore;
  /** Conversations, runs, model messages and pending items, each scoped to its thread. */
  readonly conversations: ConversationStore;
  /** Agents, channels and projects. */
  readonly catalog: Catalog;
  /** Saved MCP app artifacts with their installations, and ledger references to them. */
  readonly artifacts: ArtifactStore;
  /** The writes of directives, runs and responses: every role port (storage-writer.ts). */
  readonly writer: StorageWriter;
  /** Deliveries to channels that moves wrote and no channel has taken yet. */
  readonly outbox: DeliveryOutbox;
  /** Users' links to chat addresses on channels, and the one-use codes that make them. */
  readonly links: ChannelLinks;
  /** Hooks in (contract section 12) and the idempotency keys of their calls. */
  readonly hooks: HookStore;
  /** Schedules (contract section 12) and the due times claimed and not yet sent. */
  readonly schedules: ScheduleStore;
  /** Webhooks out (contract section 12) and their outbox, filled by the event log's own writes. */
  readonly webhooks: WebhookStore;
  /** What chat adapters have read and handled: each place's cursor, each message's claim. */
  readonly chatInbox: ChatInbox;
  /** Each thread's stored live events. */
  readonly events: EventLog;
  /** Writes a world, upserting by id: importing the same world twice changes nothing. */
  readonly importWorld: (world: World) => Promise<void>;
  /** Whether nothing has been stored yet: a first start, which gets the demo world. */
  readonly isEmpty: () => Promise<boolean>;
  /** Whether the backend answers now (GET /readyz). */
  readonly ready: ReadinessProbe;
  /** Closes the connections; nothing is read or written after. */
  readonly close: () => Promise<void>;
  /** The connection pool's state now, for metrics; absent where there is no pool (memory). */
  readonly pool?: () => { readonly used: number; readonly free: number; readonly pending: number };
}

/**
 * Thrown by a store when the database cannot be reached (refused, reset, pool exhausted, server
 * shutting down): the edge answers 503 instead of treating it as a bug.
 */
export class StorageUnavailableError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Storage is unavailable', options);
    this.name = 'StorageUnavailableError';
  }
}
