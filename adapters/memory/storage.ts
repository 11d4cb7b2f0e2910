import { isInLedger } from '../../domain/ledger-visibility.ts';
import type { ForkLink } from '../../domain/ledger-visibility.ts';
import { canAccessThread } from '../../domain/thread-access.ts';
import type { Storage } from '../../ports/storage.ts';
import { UNARCHIVED } from '../../ports/thread-store.ts';
import type { Thread } from '../../domain/model.ts';
import { matchesEveryWord } from '../../domain/thread-search.ts';
import { memoryArtifactStore } from './artifact-store.ts';
import { memoryChannelLinks } from './channel-links.ts';
import { memoryHookStore } from './hook-store.ts';
import { memoryScheduleStore } from './schedule-store.ts';
import { memoryWebhookStore } from './webhook-store.ts';
import { memoryAccounts } from './accounts.ts';
import { memoryChatInbox } from './chat-inbox.ts';
import { memoryStorageWriter } from './storage-writer.ts';
import { memoryDeliveryOutbox } from './delivery-outbox.ts';
import { memoryEventLog } from './event-log.ts';
import { importWorld } from './import-world.ts';
import { keysetPage } from './page.ts';
import { emptyState, threadActivity, type MemoryState } from './state.ts';

const byId = <T extends { id: string }>(a: T, b: T) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Storage held in memory (`CONSOLE_STORAGE=memory`): nothing persists; the world file is the whole state. */
export function createMemoryStorage(state: MemoryState = emptyState()): Storage {
  const outbox = memoryDeliveryOutbox(state.deliveries);
  const accessible = (userId: string, threadId: string) => {
    const thread = state.threads.get(threadId);
    return thread !== undefined && canAccessThread(userId, thread, [...(state.members.get(threadId) ?? [])]) ? thread : null;
  };
  const latestOf = (threadId: string) => [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort(byId).at(-1) ?? null;

  // What a search reads of a thread: its title and its own ledger's messages (never those of another thread).
  const textsOf = (thread: Thread): string[] =>
    [thread.title, ...[...state.messages.values()].filter((m) => m.thread_id === thread.id).map((m) => m.text)];

  const chainOf = (threadId: string): ForkLink[] => {
    const chain: ForkLink[] = [];
    const seen = new Set<string>();
    for (let t = state.threads.get(threadId); t !== undefined && !seen.has(t.id); t = t.fork_of === null ? undefined : state.threads.get(t.fork_of)) {
      seen.add(t.id);
      chain.push({ id: t.id, fork_of: t.fork_of, fork_cutoff: t.fork_cutoff });
    }
    return chain;
  };

  return {
    accounts: memoryAccounts(state.users, state.credentials),
    threads: {
      findAccessible: async (userId, threadId) => {
        const row = accessible(userId, threadId);
        return row === null ? null : { row, chain: chainOf(threadId) };
      },
      findRow: async (userId, threadId) => accessible(userId, threadId),
      async findRowWithLatest(userId, threadId) {
        const row = accessible(userId, threadId);
        return row === null ? null : { row, latest: latestOf(threadId) };
      },
      exists: async (threadId) => state.threads.has(threadId),
      listAccessible: async (userId, page, filter = UNARCHIVED) =>
        keysetPage(
          [...state.threads.values()]
            .filter((t) => t.archived === filter.archived && accessible(userId, t.id) !== null && (filter.words.length === 0 || matchesEveryWord(filter.words, textsOf(t))))
            .map((thread) => ({ ...thread, activity: threadActivity(state, thread.id) })),
          page,
        ),
    },
    ledger: {
      page: async (segments, page, options) =>
        keysetPage(
          [...state.messages.values()].filter((m) => isInLedger(segments, m) && !(options?.live === true && state.rewoundMessages.has(m.id))).map(({ thread_id: _, ...message }) => {
            const artifact = message.artifact_id === null ? undefined : state.artifacts.get(message.artifact_id);
            const installation = artifact === undefined ? undefined : state.installations.get(artifact.installation);
            return artifact === undefined ? message : { ...message, app: { title: artifact.title, provider_name: installation?.provider_name ?? '' } };
          }),
          page,
        ),
    },
    artifacts: memoryArtifactStore(state),
    writer: memoryStorageWriter(state, outbox),
    outbox,
    links: memoryChannelLinks(state.channelLinks),
    hooks: memoryHookStore(state.hooks),
    schedules: memoryScheduleStore(state.schedules),
    webhooks: memoryWebhookStore(state.webhooks, state),
    chatInbox: memoryChatInbox(state.chatInbox),
    events: memoryEventLog(state, outbox),
    conversations: {
      findForUser: async (userId, conversationId) => {
        const conversation = state.conversations.get(conversationId);
        return conversation !== undefined && accessible(userId, conversation.thread_id) !== null ? conversation : null;
      },
      listByThread: async (threadId) => [...state.conversations.values()].filter((c) => c.thread_id === threadId).sort(byId),
      livingAt: async (address) =>
        [...state.conversations.values()].find((c) => c.moved_to === null && c.address?.channel === address.channel && c.address.id === address.id) ?? null,
      livingOn: async (channel) =>
        [...state.conversations.values()]
          .filter((c) => c.moved_to === null && c.address?.channel === channel)
          .map((c) => ({ address: c.address!.id, title: state.threads.get(c.thread_id)?.title ?? '' }))
          .sort((a, b) => (a.address < b.address ? -1 : a.address > b.address ? 1 : 0)),
      latestByThread: async (threadId) => latestOf(threadId),
      runsPage: async (threadId, conversationId, page) => {
        const conversation = state.conversations.get(conversationId);
        if (conversation?.thread_id !== threadId) return null;
        return keysetPage([...state.runs.values()].filter((r) => r.conversation_id === conversationId), page);
      },
      modelMessagesPage: async (threadId, runId, page) => {
        const run = state.runs.get(runId);
        if (run === undefined || state.conversations.get(run.conversation_id)?.thread_id !== threadId) return null;
        return keysetPage([...state.modelMessages.values()].filter((m) => m.run_id === runId), page);
      },
      pendingByThread: async (threadId) =>
        [...state.pending.values()].filter((p) => state.conversations.get(p.conversation_id)?.thread_id === threadId).sort(byId),
    },
    catalog: {
      agents: async () => [...state.agents.values()].sort(byId),
      // The world's linked users, then those who linked themselves with a code, in byte order.
      channels: async () => [...state.channels.values()].sort(byId).map((channel) => {
        const linked = [...state.channelLinks.links.values()].filter((l) => l.channel === channel.id && !channel.linked_users.includes(l.user)).map((l) => l.user).sort();
        return linked.length === 0 ? channel : { ...channel, linked_users: [...channel.linked_users, ...linked] };
      }),
      projects: async () => [...state.projects.keys()].sort(),
      project: async (name) => state.projects.get(name) ?? null,
    },
    importWorld: async (world) => importWorld(state, world),
    isEmpty: async () => state.users.size === 0,
    ready: async () => true,
    close: async () => {},
  };
}
