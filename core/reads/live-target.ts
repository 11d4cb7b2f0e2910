import { UUID_PATTERN } from '../../domain/vocabulary.ts';
import type { ConsoleThreads } from '../../ports/console-threads.ts';
import type { ThreadStore } from '../../ports/thread-store.ts';

/** What a live socket follows: a thread row, or one of the caller's console keys whose row is not written yet. */
export type LiveTarget = { readonly thread: string } | { readonly key: string };

/**
 * The thread a live socket names (contract section 5): a row the caller can access, or the row of one
 * of the caller's keys; another user's row is `not_found`; any other value is taken as a key of the
 * caller's, followed from the moment its first directive writes the row.
 */
export async function liveTarget(
  stores: { readonly threads: Pick<ThreadStore, 'findRow' | 'exists'>; readonly writer: Pick<ConsoleThreads, 'findByKey'> },
  userId: string,
  ref: string,
): Promise<LiveTarget | 'not_found'> {
  const found = await stores.threads.findRow(userId, ref);
  if (found !== null) return { thread: found.id };
  const keyed = await stores.writer.findByKey(userId, ref);
  if (keyed !== null) return { thread: keyed.id };
  if (UUID_PATTERN.test(ref) && (await stores.threads.exists(ref.toLowerCase()))) return 'not_found';
  return { key: ref };
}
