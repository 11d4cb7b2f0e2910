import type { ChatInbox } from '../../ports/chat-inbox.ts';
import type { Logger } from '../../ports/logger.ts';

/**
 * How long a chat message's claim is kept: 14 days. A claim matters while its message can be read
 * again: a room's cursor moves past a message as soon as it is handled (a failed or held one is read
 * again every few seconds), so only a stalled room, or a cursor that fell out of the archive and is read
 * from its time, reaches back further, never by days. Prosody keeps archives a week by default
 * (`archive_expires_after`); a week more is the margin. The `told/<address>` claims (the how-to-link
 * reply said once) go too: a sender still unlinked after 14 days is told once more.
 */
export const CHAT_CLAIM_HORIZON_MS = 14 * 86_400_000;

/** Claims are pruned at start and then this often, on every instance (a delete is idempotent). */
export const CHAT_CLAIM_PRUNE_EVERY_MS = 3_600_000;

/** Forgets the claims made before the horizon; never throws (a failure is logged, the next run tries again). */
export async function pruneChatClaims(inbox: Pick<ChatInbox, 'pruneClaims'>, log: Logger, now: number = Date.now()): Promise<number> {
  try {
    const pruned = await inbox.pruneClaims(new Date(now - CHAT_CLAIM_HORIZON_MS));
    if (pruned > 0) log.info({ pruned }, 'forgot chat message claims older than the horizon');
    return pruned;
  } catch (error) {
    log.warn({ err: error }, 'pruning chat message claims failed');
    return 0;
  }
}
