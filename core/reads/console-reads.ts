import type { Failure } from '../../domain/errors.ts';
import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import { CONSOLE_CHANNEL, type Conversation, type ModelMessage, type Page, type PageRequest, type Pending, type Run, type Thread, type User, type ThreadListItem } from '../../domain/model.ts';
import { fail, ok, type Result } from '../../domain/result.ts';
import { agentPostures, channelRoutes, type AgentPostures, type RouteInfo } from '../../domain/vocabulary.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';
import { searchWords } from '../../domain/thread-search.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { Catalog } from '../../ports/catalog.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import { offeredOnly, standings, type AgentVocabularies } from '../agents/vocabularies.ts';
import { ledgerMessage, type LedgerMessage, type ViewerRouting } from '../artifacts/overview.ts';

/** The console channel's id: directives create threads there. */

type Read<T> = Promise<Result<T, Failure>>;

/** A connected channel as GET /channels answers it. */
export interface ChannelInfo {
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  readonly shared: boolean;
  readonly browsable: boolean;
}

/** The answer of every read under a thread the caller cannot use (one value, frozen: shared by every such answer). */
const UNAVAILABLE = Object.freeze(fail(Object.freeze({ code: 'thread_unavailable' } as const)));

/** A thread the store found for the caller, or `thread_unavailable`. */
const orUnavailable = <T>(value: T | null): Result<T, Failure> => (value === null ? UNAVAILABLE : ok(value));

/**
 * The console's reads. Each read under a thread resolves the thread for the caller first (one
 * query, no messages: the row alone, or with its fork chain for the ledger read only) and answers
 * `thread_unavailable` for an unknown or inaccessible id, never the empty list the sub-resource read
 * alone would give.
 */
export function consoleReads(storage: { readonly threads: ThreadStore; readonly conversations: ConversationStore; readonly catalog: Catalog; readonly ledger: LedgerStore }, vocabularies: AgentVocabularies, config: ViewerRouting) {
  const toMessage = ledgerMessage(config);
  // The ledger read alone resolves the fork chain; every other read under a thread wants the row only.
  // The row read maps the store's answer as it settles (one promise, no `async` step of its own).
  const thread = (user: User, id: string): Read<Thread> => storage.threads.findRow(user.id, id).then(orUnavailable);

  return {
    // What the agents advertised, narrowed by the catalog: what is known now, never waited for (an agent
    // not known yet is asked in the background); an agent unknown or unavailable is left out.
    routes: async (): Promise<RouteInfo[]> => {
      const console = (await storage.catalog.channels()).find((channel) => channel.id === CONSOLE_CHANNEL);
      return console === undefined ? [] : channelRoutes(console, offeredOnly(await vocabularies.all(console.agents)));
    },
    channels: async (user: User): Promise<ChannelInfo[]> =>
      (await storage.catalog.channels())
        .filter((channel) => channel.linked_users.includes(user.id))
        .map(({ id, kind, name, shared, browsable }) => ({ id, kind, name, shared, browsable })),
    projects: (): Promise<string[]> => storage.catalog.projects(),
    // The agents of the channels linked to the caller (no read asks the others): what each offers, or why it is unavailable.
    permissions: async (user: User): Promise<AgentPostures[]> => {
      const linked = (await storage.catalog.channels()).filter((channel) => channel.linked_users.includes(user.id)).flatMap((channel) => channel.agents);
      return agentPostures(standings(await vocabularies.all(linked)));
    },
    /** The thread list: archived threads only when asked, and with `q` those its every word finds (domain/thread-search.ts). */
    threads: (user: User, page: PageRequest, filter: { readonly archived: boolean; readonly q: string | null } = { archived: false, q: null }): Promise<Page<ThreadListItem>> =>
      storage.threads.listAccessible(user.id, page, { archived: filter.archived, words: filter.q === null ? [] : searchWords(filter.q) }),
    thread,
    messages: async (user: User, id: string, page: PageRequest): Read<Page<LedgerMessage>> => {
      const accessible = await storage.threads.findAccessible(user.id, id);
      if (accessible === null) return UNAVAILABLE;
      const entries = await storage.ledger.page(ledgerSegments(accessible.chain), page);
      return ok({ items: entries.items.map(toMessage), next: entries.next });
    },
    conversations: async (user: User, id: string): Read<Conversation[]> => {
      const found = await thread(user, id);
      return found.ok ? ok(await storage.conversations.listByThread(id)) : found;
    },
    runs: async (user: User, id: string, conversationId: string, page: PageRequest): Read<Page<Run>> => {
      const found = await thread(user, id);
      if (!found.ok) return found;
      const runs = await storage.conversations.runsPage(id, conversationId, page);
      return runs === null ? fail({ code: 'conversation_unavailable' }) : ok(runs);
    },
    modelMessages: async (user: User, id: string, runId: string, page: PageRequest): Read<Page<ModelMessage>> => {
      const found = await thread(user, id);
      if (!found.ok) return found;
      const messages = await storage.conversations.modelMessagesPage(id, runId, page);
      return messages === null ? fail({ code: 'run_unavailable' }) : ok(messages);
    },
    pending: async (user: User, id: string): Read<Pending[]> => {
      const found = await thread(user, id);
      return found.ok ? ok(await storage.conversations.pendingByThread(id)) : found;
    },
  };
}

export type ConsoleReads = ReturnType<typeof consoleReads>;
