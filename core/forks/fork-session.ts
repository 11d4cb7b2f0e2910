import { ledgerSegments } from '../../domain/ledger-visibility.ts';
import type { Id } from '../../domain/model.ts';
import type { ConversationStore } from '../../ports/conversation-store.ts';
import type { LedgerStore } from '../../ports/ledger-store.ts';
import type { RunRecords } from '../../ports/run-records.ts';
import type { TurnLeases } from '../../ports/turn-leases.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';

/** What {@link forkableSession} reads. */
export interface ForkSessionStores {
  readonly threads: ThreadStore;
  readonly ledger: LedgerStore;
  readonly conversations: Pick<ConversationStore, 'latestByThread'>;
  readonly writer: Pick<RunRecords, 'sessionOf'> & Pick<TurnLeases, 'runningTurn'>;
}

/**
 * The agent session a fork's first turn may fork (ACP `session/fork`, contract section 11), or null: then the turn
 * starts a new session briefed with the history up to the cutoff. `session/fork` copies a session as it is now, so
 * it is offered only where that is the fork's starting point: the fork's own ledger holds nothing but this turn's
 * directive (its first turn), the fork's cutoff is still the latest message of the source's ledger (as its owner
 * reads it, what a rewind took back left out: a rewind drops the session too), and the source's latest
 * conversation is of the same agent and has a session, and no turn of the source runs (its session would be copied
 * mid-turn). Read when the agent is about to open a new session.
 */
export async function forkableSession(stores: ForkSessionStores, owner: string, forkId: Id, agent: string): Promise<string | null> {
  const fork = await stores.threads.findAccessible(owner, forkId);
  if (fork === null || fork.row.fork_of === null || fork.row.fork_cutoff === null) return null;
  const own = await stores.ledger.page([{ thread_id: forkId, upTo: null }], { limit: 2, before: null });
  if (own.items.length > 1) return null;
  const source = await stores.threads.findAccessible(owner, fork.row.fork_of);
  if (source === null) return null;
  const [latest] = (await stores.ledger.page(ledgerSegments(source.chain), { limit: 1, before: null }, { live: true })).items;
  if (latest === undefined || latest.id !== fork.row.fork_cutoff) return null;
  const conversation = await stores.conversations.latestByThread(source.row.id);
  if (conversation === null || conversation.agent !== agent) return null;
  if ((await stores.writer.runningTurn(source.row.id)) !== null) return null;
  return stores.writer.sessionOf(conversation.id);
}
